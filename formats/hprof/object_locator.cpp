#include "formats/hprof/object_locator.h"

#include "formats/hprof/heap_walk.h"

namespace heapd {
inline namespace hprof {
namespace {

// Visitor that fills the slots of wanted ids as their records go by.
struct locate_visitor : heap_visitor {
    id_map<std::uint32_t>* slot;
    std::vector<located_object>* found;
    located_object* want(std::uint64_t id) {
        std::uint32_t* s = slot->find(id);
        return s ? &(*found)[*s] : nullptr;
    }
    void instance(const instance_view& v) {
        if (auto* o = want(v.id)) {
            o->tag = 0x21;
            o->instance = v;
        }
    }
    void object_array(const object_array_view& v) {
        if (auto* o = want(v.id)) {
            o->tag = 0x22;
            o->object_array = v;
        }
    }
    void primitive_array(const primitive_array_view& v) {
        if (auto* o = want(v.id)) {
            o->tag = 0x23;
            o->primitive_array = v;
        }
    }
};

}  // namespace

object_locator::object_locator(const record_index& idx, std::span<const std::uint64_t> ids,
                               const record_finder& finder) {
    locate_visitor v;
    v.slot = &slot_;
    v.found = &found_;
    for (std::uint64_t id : ids) {
        if (id == 0 || !slot_.insert(id, static_cast<std::uint32_t>(found_.size())).second) continue;
        found_.emplace_back();
        if (!finder) continue;
        if (const auto offset = finder(id)) (void)visit_record_at(idx, *offset, v);
    }
    if (!found_.empty() && !finder) walk_heap(idx, v);
}

const located_object* object_locator::find(std::uint64_t id) const {
    const std::uint32_t* s = slot_.find(id);
    if (s == nullptr || found_[*s].tag == 0) return nullptr;
    return &found_[*s];
}

}  // namespace hprof
}  // namespace heapd
