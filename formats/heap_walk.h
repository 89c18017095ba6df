#pragma once
// Walks every heap dump record of an indexed dump with one visitor, collecting what stopped it.
#include <vector>

#include "heap_records.h"
#include "record_index.h"

namespace heapd {

// Visits all sub-records of all heap dump records in file order. A damaged segment is left at the
// damage (its problem recorded) and the walk goes on with the next segment; a cut at the end of a
// truncated file is not recorded again, the index already says where the file stops.
template <class V>
void walk_heap(const record_index& idx, V& v, std::vector<error_info>* problems = nullptr) {
    for (const hprof_record& rec : idx.heap_records()) {
        auto r = walk_heap_body(rec.body, rec.body_offset, idx.id_size(), v);
        if (!r && problems != nullptr && !(rec.truncated && r.error().code == error_code::out_of_bounds))
            problems->push_back(r.error());
    }
}

} // namespace heapd
