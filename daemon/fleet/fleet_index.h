#pragma once
// What `heapd fleet` read before, kept in a file between runs: each report directory's fleet entry
// with the version of the file it was read from, so that a run reads only what is new or changed
// (a bucket of 10,000 reports is listed, not read again). Written whole to a temporary name and
// renamed; one that cannot be read is started afresh, said so.
#include <cstdint>
#include <map>
#include <string>

#include "base/error.h"
#include "formats/report/fleet_entry.h"

namespace heapd::daemon {

// One report as the index keeps it.
struct fleet_index_item {
    std::string file, version;  // what it was read from (fleet_listed)
    fleet_entry entry;
};

// The index of one source.
struct fleet_index {
    std::string source;                             // fleet_source::describe() of what it indexes
    std::map<std::string, fleet_index_item> items;  // by key
};

// The index at path (at most 1 GiB); an empty one for source when there is no file, or the file
// indexes another source. Fails when the file is there but damaged.
result<fleet_index> load_fleet_index(const std::string& path, const std::string& source);
// Writes the index (mode 0600, its directory made 0700 if missing).
result<void> save_fleet_index(const std::string& path, const fleet_index& index);

}  // namespace heapd::daemon
