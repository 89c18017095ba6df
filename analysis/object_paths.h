#pragma once
// `heapd path`: the shortest strong paths from GC roots to one object of a dump.
#include <cstddef>
#include <cstdint>
#include <span>

#include "base/error.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace analysis {

// Finds up to max_paths shortest paths to the object with this id, each from a different GC root,
// with field names and array indices, in heap dump `dump` of the file (1 for the first; 0, the
// default, for the last). Fails with not_found when the dump holds no such object.
result<object_paths_report> find_object_paths(std::span<const std::byte> data, std::uint64_t id, unsigned max_paths,
                                              unsigned dump = 0);

}  // namespace analysis
}  // namespace heapd
