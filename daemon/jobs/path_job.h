#pragma once
// The path job: the shortest strong paths from GC roots to one object of a dump the store keeps,
// found in a child process (analysis_child.h) since it builds the dump's object graph, and kept
// in the entry beside the report, so asking again answers at once.
#include <cstdint>
#include <string>

#include "daemon/jobs/job_manager.h"
#include "daemon/store/store.h"

namespace heapd::daemon {

// Which object of which stored dump, and how many paths.
struct path_request {
    std::string entry;                          // a store entry with its dump
    std::uint64_t object = 0;                   // the object's id as reports print it
    unsigned roots = 1;                         // paths from up to this many different GC roots
    std::string executable = "/proc/self/exe";  // the heapd that runs the child process
};

// The name under which the entry keeps the answer to such a request.
std::string path_file_name(std::uint64_t object, unsigned roots);

// The work of one path query: finds the paths in a child process and keeps the answer in the entry
// (path_file_name); ends with the entry's id.
job_work make_path_work(store& s, path_request request);

}  // namespace heapd::daemon
