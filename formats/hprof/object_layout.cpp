#include "formats/hprof/object_layout.h"

#include <algorithm>

#include "formats/hprof/hotspot_quirks.h"

namespace heapd {
inline namespace hprof {
namespace {

// The array length follows the header; the first element sits at the length's end rounded up to a
// heap word (16 or 24 on 64-bit, 12 on 32-bit, where 8-byte elements align to 16).
// Compact object headers (JDK 24 and later, -XX:+UseCompactObjectHeaders) keep the class in the
// 8-byte mark word: fields start at 8, the array length too, and elements at 12 (16 for 8-byte ones).
constexpr vm_layout layouts_64[] = {
    {"64-bit, compressed oops", 4, 12, 8, 16, 16},
    {"64-bit, uncompressed oops", 8, 12, 8, 16, 16},
    {"64-bit, uncompressed oops and class pointers", 8, 16, 8, 24, 24},
    {"64-bit, compact object headers, compressed oops", 4, 8, 8, 12, 16, 24},
    {"64-bit, compact object headers, uncompressed oops", 8, 8, 8, 12, 16, 24},
};
constexpr vm_layout layouts_32[] = {{"32-bit", 4, 8, 4, 12, 16}};
constexpr std::uint32_t object_alignment = 8;

constexpr std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

// One field to place: its size and whether it is a reference.
struct field_to_place {
    std::uint32_t size;
    bool oop;
};

// The blocks of a class being laid out: free holes (kept apart, as HotSpot keeps its blocks) and the end.
struct layout_blocks {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> holes;  // (offset, size), by offset
    std::uint32_t end = 0;

    void append(std::uint32_t size) {
        std::uint32_t off = static_cast<std::uint32_t>(align_up(end, size));
        if (off > end) holes.emplace_back(end, off - end);
        end = off + size;
    }
    // HotSpot's fit: the smallest hole that holds the field once aligned, the highest such on ties.
    void place(std::uint32_t size) {
        std::size_t best = holes.size();
        for (std::size_t i = 0; i < holes.size(); ++i) {
            auto [off, len] = holes[i];
            std::uint32_t pad = off % size ? size - off % size : 0;
            if (len >= size + pad && (best == holes.size() || len <= holes[best].second)) best = i;
        }
        if (best == holes.size()) return append(size);
        auto [off, len] = holes[best];
        std::uint32_t pad = off % size ? size - off % size : 0;
        holes.erase(holes.begin() + static_cast<std::ptrdiff_t>(best));
        std::vector<std::pair<std::uint32_t, std::uint32_t>> parts;
        if (pad > 0) parts.emplace_back(off, pad);
        if (len > pad + size) parts.emplace_back(off + pad + size, len - pad - size);
        holes.insert(holes.begin() + static_cast<std::ptrdiff_t>(best), parts.begin(), parts.end());
    }
    // Holes as a subclass sees them: adjacent free blocks merged.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> merged() const {
        std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
        for (auto h : holes) {
            if (!out.empty() && out.back().first + out.back().second == h.first)
                out.back().second += h.second;
            else
                out.push_back(h);
        }
        return out;
    }
};

// Primitives largest first (stable), then references in declaration order.
void sort_for_layout(std::vector<field_to_place>& fields) {
    std::stable_sort(fields.begin(), fields.end(), [](const field_to_place& a, const field_to_place& b) {
        if (a.oop != b.oop) return !a.oop;
        return !a.oop && a.size > b.size;
    });
}

// A class's own fields: those laid out as usual and those of each @Contended group.
struct own_fields {
    std::vector<field_to_place> regular;
    std::vector<std::vector<field_to_place>> groups;
    const contended_info* contended = nullptr;
    bool any = false;
    bool whole_class() const { return contended != nullptr && contended->whole_class; }
};

own_fields fields_of(const class_info& c, const record_index& names, const vm_layout& layout, field_rules rules) {
    // The dumper lists a class's fields in reverse declaration order.
    std::vector<std::pair<std::string_view, std::uint8_t>> declared;
    c.dump.for_each_field(
        [&](const class_dump_view::field& f) { declared.emplace_back(names.utf8(f.name_id), f.type); });
    std::reverse(declared.begin(), declared.end());
    // A field injected in older releases may be declared in newer ones (ResolvedMethodName.vmholder).
    for (const injected_field& f : injected_fields(c.raw_name, rules.java_feature))
        if (std::none_of(declared.begin(), declared.end(), [&](const auto& d) { return d.first == f.name; }))
            declared.emplace_back(f.name, f.intptr ? (layout.word_size == 8 ? 11 : 10) : f.type);
    own_fields out;
    out.contended = contended_layout(c.raw_name, rules.java_feature);
    out.any = !declared.empty();
    if (out.contended != nullptr) out.groups.resize(out.contended->groups.size());
    for (auto [name, type] : declared) {
        field_to_place f{type == 2 ? layout.oop_size : value_size(type, 8), type == 2};
        std::vector<field_to_place>* into = &out.regular;
        for (std::size_t g = 0; g < out.groups.size(); ++g) {
            const auto& names = out.contended->groups[g];
            if (std::find(names.begin(), names.end(), name) != names.end()) into = &out.groups[g];
        }
        into->push_back(f);
    }
    sort_for_layout(out.regular);
    for (auto& g : out.groups) sort_for_layout(g);
    std::erase_if(out.groups, [](const auto& g) { return g.empty(); });
    return out;
}

// JDK 15 and later: each field goes into the best-fitting hole the class or its supers left. A
// contended class starts with padding and appends its fields; each contended group is appended
// after padding of its own; padding closes the object.
void place_packed(layout_model::shape& current, bool& has_fields, const own_fields& f) {
    layout_blocks blocks;
    bool append_only = (current.contended && has_fields) || f.whole_class();
    blocks.end = current.end;  // a contended super's end already holds its tail padding
    if (!current.contended) blocks.holes = current.holes;
    if (f.whole_class()) blocks.end += contended_padding;
    for (const auto& r : f.regular) append_only ? blocks.append(r.size) : blocks.place(r.size);
    for (const auto& g : f.groups) {
        blocks.end += contended_padding;
        for (const auto& p : g) blocks.append(p.size);
    }
    if (f.whole_class() || !f.groups.empty()) blocks.end += contended_padding;
    has_fields = has_fields || f.any;
    current.end = blocks.end;
    current.holes = blocks.merged();
}

// JDK 6 to 14 (ClassFileParser::layout_fields): a class's fields start where its super's end, rounded
// up to a reference; longs and doubles first (the 4 bytes before them, if any, take one int, shorts
// or bytes, or else one reference), then ints, shorts, bytes and references last; the boot classes
// with fixed offsets put references first and fill no gap. @Contended fields follow, between paddings.
void place_per_class(layout_model::shape& current, const own_fields& f, bool fixed_order, const vm_layout& l) {
    const std::uint32_t oop = l.oop_size;
    std::uint32_t off = static_cast<std::uint32_t>(l.header_size + align_up(current.end - l.header_size, oop));
    std::uint32_t count[9] = {};  // by size; references counted at [0]
    for (const auto& r : f.regular) ++count[r.oop ? 0 : r.size];
    const bool whole_class = f.whole_class();
    if (whole_class) off += contended_padding;
    if (fixed_order) off += count[0] * oop, count[0] = 0;
    if (count[8] > 0) {
        std::uint32_t aligned = static_cast<std::uint32_t>(align_up(off, 8));
        std::uint32_t room = aligned - off;
        if (!fixed_order && room > 0) {
            if (count[4] > 0) --count[4], room -= 4;
            for (; room >= 2 && count[2] > 0; room -= 2) --count[2];
            for (; room > 0 && count[1] > 0; --room) --count[1];
            if (room >= oop && count[0] > 0) --count[0];
        }
        off = aligned + 8 * count[8];
    }
    off += 4 * count[4] + 2 * count[2] + count[1];
    if (count[0] > 0) off = static_cast<std::uint32_t>(align_up(off, oop)) + count[0] * oop;
    for (const auto& g : f.groups) {
        off += contended_padding;
        for (const auto& p : g) off = static_cast<std::uint32_t>(align_up(off, p.size)) + p.size;
    }
    if (whole_class || !f.groups.empty()) off += contended_padding;
    current.end = off;
}

}  // namespace

std::span<const vm_layout> candidate_layouts(unsigned id_size) {
    if (id_size == 4) return layouts_32;
    return layouts_64;
}

std::string_view field_rules::name() const {
    if (java_feature <= 6) return "JDK 6";
    if (java_feature == 7) return "JDK 7";
    if (java_feature == 8) return "JDK 8";
    if (java_feature < 15) return "JDK 9 to 14";
    if (java_feature < 19) return "JDK 15 to 18";
    return "JDK 19 and later";
}

java_release_guess guess_java_release(const class_table& classes) {
    const class_info* s = classes.find_by_name("java.lang.String");
    if (s == nullptr) return {};
    auto has = [&](std::string_view field) { return classes.find_field(s->id(), field).has_value(); };
    if (has("hashIsZero")) {  // 13 and 14 are rare: JDK 15's layout assumed
        const class_info* t = classes.find_by_name("java.lang.Thread");
        if (t != nullptr && classes.find_field(t->id(), "holder").has_value()) return {25, "19 or later"};
        return {17, "13 to 18"};
    }
    if (has("coder")) return {11, "9 to 12"};
    if (has("offset")) return {6, "6 or older"};
    if (has("hash32")) return {7, "7"};
    if (has("value")) return {8, "7 or 8"};
    return {};
}

const layout_model::shape& layout_model::shape_of(std::uint64_t class_id) {
    if (const std::uint32_t* i = shape_index_.find(class_id)) return shapes_[*i];
    // The chain from this class up to the first one already laid out (or the root), built bottom-up.
    std::vector<const class_info*> chain;
    const shape* base = nullptr;
    for (const class_info* c = classes_->find(class_id); c != nullptr && chain.size() < max_class_depth;) {
        chain.push_back(c);
        if (const std::uint32_t* i = shape_index_.find(c->super_id())) {
            base = &shapes_[*i];
            break;
        }
        c = classes_->find(c->super_id());
        if (c != nullptr && std::find(chain.begin(), chain.end(), c) != chain.end()) break;
    }
    shape current;
    if (base != nullptr)
        current = *base;
    else
        current.end = layout_.header_size;
    bool has_fields = base != nullptr && base->end > layout_.header_size;
    const record_index& names = classes_->index();
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        const class_info& c = **it;
        const own_fields f = fields_of(c, names, layout_, rules_);
        if (rules_.per_class_layout())
            place_per_class(current, f, c.dump.loader_id() == 0 && has_fixed_field_order(c.raw_name), layout_);
        else
            place_packed(current, has_fields, f);
        current.contended = current.contended || f.contended != nullptr;
        current.known = true;
        shape_index_.insert(c.id(), static_cast<std::uint32_t>(shapes_.size()));
        shapes_.push_back(current);
    }
    if (const std::uint32_t* i = shape_index_.find(class_id)) return shapes_[*i];
    // Not in the class table: a bare object.
    shape bare;
    bare.end = layout_.header_size;
    shape_index_.insert(class_id, static_cast<std::uint32_t>(shapes_.size()));
    shapes_.push_back(bare);
    return shapes_.back();
}

std::uint32_t layout_model::instance_size(std::uint64_t class_id) {
    return static_cast<std::uint32_t>(align_up(shape_of(class_id).end, object_alignment));
}

std::uint32_t layout_model::mirror_size(std::uint64_t class_id, std::uint32_t class_object_size) const {
    const class_info* c = classes_->find(class_id);
    // Statics live in the Class object from JDK 7; before, in the class's permanent-generation data.
    if (c == nullptr || c->raw_name.starts_with('[') || rules_.java_feature <= 6) return class_object_size;
    const record_index& names = classes_->index();
    std::uint64_t end = class_object_size;
    std::vector<std::uint32_t> prims;
    c->dump.for_each_static([&](const class_dump_view::static_field& f) {
        std::string_view name = names.utf8(f.name_id);
        if (name == "<resolved_references>" || name == "<init_lock>") return;
        if (f.type == 2)
            end += layout_.oop_size;
        else
            prims.push_back(value_size(f.type, 8));
    });
    std::sort(prims.begin(), prims.end(), std::greater<>());
    for (std::uint32_t s : prims) end = align_up(end, s) + s;
    return static_cast<std::uint32_t>(align_up(end, object_alignment));
}

}  // namespace hprof
}  // namespace heapd
