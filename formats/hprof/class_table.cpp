#include "formats/hprof/class_table.h"

#include "base/hex_text.h"
#include "formats/hprof/heap_walk.h"
#include "formats/hprof/java_names.h"

namespace heapd {
inline namespace hprof {

void class_table::add(const class_dump_view& dump) {
    auto [slot, inserted] = by_id_.insert(dump.class_id(), static_cast<std::uint32_t>(classes_.size()));
    if (!inserted) return;
    classes_.push_back(class_info{dump, idx_->class_name(dump.class_id())});
}

const class_info* class_table::find(std::uint64_t class_id) const {
    const std::uint32_t* i = by_id_.find(class_id);
    return i ? &classes_[*i] : nullptr;
}

const class_info* class_table::find_by_name(std::string_view java_name) const {
    for (const class_info& c : classes_)
        if (same_class_name(c.raw_name, java_name)) return &c;
    return nullptr;
}

std::optional<field_slot> class_table::find_field(std::uint64_t class_id, std::string_view name) const {
    std::uint32_t base = 0;
    const unsigned id_size = idx_->id_size();
    const class_info* c = find(class_id);
    for (int depth = 0; c != nullptr && depth < static_cast<int>(max_class_depth); ++depth) {
        std::optional<field_slot> hit;
        std::uint32_t off = base;
        c->dump.for_each_field([&](const class_dump_view::field& f) {
            if (!hit && idx_->utf8(f.name_id) == name) hit = field_slot{off, f.type};
            off += value_size(f.type, id_size);
        });
        if (hit) return hit;
        base = off;
        c = find(c->super_id());
    }
    return std::nullopt;
}

bool class_table::is_a(std::uint64_t class_id, std::string_view java_name) const {
    const class_info* c = find(class_id);
    for (int depth = 0; c != nullptr && depth < static_cast<int>(max_class_depth); ++depth) {
        if (same_class_name(c->raw_name, java_name)) return true;
        c = find(c->super_id());
    }
    return false;
}

std::string class_table::java_name(std::uint64_t class_id) const {
    const class_info* c = find(class_id);
    std::string_view raw = c ? c->raw_name : idx_->class_name(class_id);
    if (raw.empty()) return "<unknown class " + hex_id(class_id) + ">";
    return java_class_name(raw);
}

void add_class_dumps(const record_index& idx, class_table& classes) {
    struct collector : heap_visitor {
        class_table* table;
        void class_dump(const class_dump_view& c) { table->add(c); }
    } v;
    v.table = &classes;
    walk_heap(idx, v);
}

}  // namespace hprof
}  // namespace heapd
