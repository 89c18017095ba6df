#include "formats/hprof/object_layout.h"

#include <algorithm>

#include "formats/hprof/hotspot_quirks.h"

namespace heapd {
namespace {

// The array length follows the header; the first element sits at the length's end rounded up to a
// heap word (16 or 24 on 64-bit, 12 on 32-bit, where 8-byte elements align to 16).
constexpr vm_layout layouts_64[] = {
    {"64-bit, compressed oops", 4, 12, 8, 16, 16},
    {"64-bit, uncompressed oops", 8, 12, 8, 16, 16},
    {"64-bit, uncompressed oops and class pointers", 8, 16, 8, 24, 24},
};
constexpr vm_layout layouts_32[] = {{"32-bit", 4, 8, 4, 12, 16}};
constexpr std::uint32_t object_alignment = 8;
// Deeper super chains than this are taken as a cycle in a damaged dump.
constexpr std::size_t max_class_depth = 4096;

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

}  // namespace

std::span<const vm_layout> candidate_layouts(unsigned id_size) {
    if (id_size == 4) return layouts_32;
    return layouts_64;
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
        layout_blocks blocks;
        bool append_only = current.contended && has_fields;
        blocks.end = current.end;  // a contended super's end already holds its tail padding
        if (!current.contended) blocks.holes = current.holes;
        // The dumper lists a class's fields in reverse declaration order.
        std::vector<std::pair<std::string_view, std::uint8_t>> declared;
        c.dump.for_each_field(
            [&](const class_dump_view::field& f) { declared.emplace_back(names.utf8(f.name_id), f.type); });
        std::reverse(declared.begin(), declared.end());
        for (const injected_field& f : injected_fields(c.raw_name))
            declared.emplace_back(f.name, f.intptr ? (layout_.word_size == 8 ? 11 : 10) : f.type);
        const contended_info* contended = contended_layout(c.raw_name);
        std::vector<field_to_place> regular, padded;
        for (auto [name, type] : declared) {
            field_to_place f{type == 2 ? layout_.oop_size : value_size(type, 8), type == 2};
            bool in_group = contended != nullptr &&
                            (contended->whole_class || std::find(contended->fields.begin(), contended->fields.end(),
                                                                 name) != contended->fields.end());
            (in_group ? padded : regular).push_back(f);
        }
        sort_for_layout(regular);
        sort_for_layout(padded);
        for (const auto& f : regular) append_only ? blocks.append(f.size) : blocks.place(f.size);
        if (!padded.empty()) {
            blocks.end += contended_padding;
            for (const auto& f : padded) blocks.append(f.size);
            blocks.end += contended_padding;
        }
        has_fields = has_fields || !declared.empty();
        current.end = blocks.end;
        current.holes = blocks.merged();
        current.contended = current.contended || contended != nullptr;
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
    if (c == nullptr || c->raw_name.starts_with('[')) return class_object_size;
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

}  // namespace heapd
