#pragma once
// Walks every heap dump record of an indexed dump with one visitor, collecting what stopped it.
#include <algorithm>
#include <vector>

#include "formats/hprof/heap_records.h"
#include "formats/hprof/record_index.h"

namespace heapd {
inline namespace hprof {

// Visits all sub-records of all heap dump records in file order. A damaged segment is left at the
// damage (its problem recorded) and the walk goes on with the next segment; a cut at the end of a
// truncated file is not recorded again, the index already says where the file stops.
template <class V>
void walk_heap(const record_index& idx, V& v, problem_list* problems = nullptr) {
    for (const hprof_record& rec : idx.heap_records()) {
        auto r = walk_heap_body(rec.body, rec.body_offset, idx.id_size(), v);
        if (!r && problems != nullptr && !(rec.truncated && r.error().code == error_code::out_of_bounds))
            problems->add(r.error());
    }
}

// Visits the one sub-record that starts at file offset `offset` (an offset the walker reported),
// bounded by its enclosing heap dump record; an error when no heap record holds that offset.
template <class V>
result<void> visit_record_at(const record_index& idx, std::uint64_t offset, V& v) {
    const auto& recs = idx.heap_records();
    auto it = std::upper_bound(recs.begin(), recs.end(), offset,
                               [](std::uint64_t off, const hprof_record& r) { return off < r.body_offset; });
    if (it == recs.begin()) return fail(error_code::out_of_bounds, "no heap record holds this offset", offset);
    const hprof_record& rec = *--it;
    if (offset - rec.body_offset >= rec.body.size())
        return fail(error_code::out_of_bounds, "no heap record holds this offset", offset);
    // Stops after the first sub-record.
    struct one {
        V* inner;
        bool seen = false;
        bool done() const { return seen; }
        void root(const root_view& r) {
            seen = true;
            inner->root(r);
        }
        void class_dump(const class_dump_view& c) {
            seen = true;
            inner->class_dump(c);
        }
        void instance(const instance_view& o) {
            seen = true;
            inner->instance(o);
        }
        void object_array(const object_array_view& a) {
            seen = true;
            inner->object_array(a);
        }
        void primitive_array(const primitive_array_view& a) {
            seen = true;
            inner->primitive_array(a);
        }
        void heap_info(const heap_info_view& h) {
            seen = true;
            inner->heap_info(h);
        }
    };
    one w{&v};
    return walk_heap_body(rec.body.subspan(offset - rec.body_offset), offset, idx.id_size(), w);
}

}  // namespace hprof
}  // namespace heapd
