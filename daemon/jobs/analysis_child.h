#pragma once
// An analysis runs in a child process, never in the daemon: a client may cut its file short while
// it is mapped (the reads past the new end fault with SIGBUS), a damaged dump may find a bug in the
// reader, and a big analysis takes gigabytes; each of these ends the child, not the daemon. The
// child is heapd itself (/proc/self/exe analyze-fd), given the dump as descriptor 3; it writes to
// its stdout, line by line:
//   total BYTES           the size analyzed (inflated, for a compressed dump)
//   phase NAME            a phase of the analysis starts
//   within PERMILLE       how far the current phase is, in thousandths (the long phases only: the
//                         object graph and the dominators; at most once per percent)
//   error CODE MESSAGE    it failed (CODE: error_code_name, e.g. bad_magic, io), then exits 2
//   report BYTES          followed by the report's JSON, then exits 0
// Cancelling kills it at once; it dies with its parent thread (PR_SET_PDEATHSIG). Before it reads a
// byte, a child of a root daemon becomes the user nobody: what parses or inflates a client's bytes
// holds no privilege. A compressed dump is inflated into descriptor 4, an unlinked file the parent
// made in the store's scratch directory, and refused once it inflates past the room it is given.
#include <sys/types.h>

#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "daemon/store/free_space.h"

namespace heapd::daemon {

// Where a compressed dump is inflated and big arrays are spilled (analysis_memory.h), how much
// room each has there (none: no bound), and the free space the spill leaves on that disk.
struct child_scratch {
    std::string dir;
    std::optional<std::uint64_t> max_bytes;
    disk_reserve reserve;
};

// What the parent hears while the child runs, and how it asks whether to stop.
struct child_watch {
    std::function<void(std::uint64_t total)> total;     // the size being analyzed
    std::function<void(std::string_view phase)> phase;  // a phase starts
    std::function<void(double done)> within;            // how far the current phase is (0 to 1)
    std::function<bool()> cancelled;                    // polled about every 100 ms
};

// The memory an analysis process may take beyond what it has mapped when it starts (heapd itself
// and the dump): daemon.analysis_memory, 0 for no limit of its own. For processes started from now on.
void set_analysis_memory(std::uint64_t bytes);

// Runs the analysis of dump_fd in a child (executable: heapd, this very program unless a test says
// otherwise) and returns the report's JSON text.
result<std::string> analyze_in_child(int dump_fd, const std::string& name, const child_scratch& scratch,
                                     const child_watch& watch, const std::string& executable = "/proc/self/exe");

// The same for `heapd path`: the shortest paths from GC roots to one object (object_paths.h), as
// JSON (formats/report/report_json.h) in place of the report; one phase, "paths". Fails with
// not_found when the dump holds no such object.
result<std::string> paths_in_child(int dump_fd, const std::string& name, const child_scratch& scratch,
                                   std::uint64_t object, unsigned roots, const child_watch& watch,
                                   const std::string& executable = "/proc/self/exe");

// The child's side, `heapd analyze-fd --name NAME --inflate-dir DIR --parent PID [--max-inflated N]
// [--object ID --roots N] [--disk-reserve N --disk-reserve-percent P]`: analyzes descriptor 3 (or
// finds the paths to the object) and writes what the parent reads to stdout; the process exit
// status. A compressed dump is inflated into descriptor 4 when it is open, else into an unlinked
// file in DIR. With --memory N, the address space is limited (RLIMIT_AS) to what is mapped once the
// dump is, plus N. The spill file (descriptor 5) leaves the reserve free on its disk.
int analyze_fd_main(const std::string& name, const std::string& inflate_dir, pid_t parent,
                    std::optional<std::uint64_t> object = std::nullopt, unsigned roots = 1,
                    std::optional<std::uint64_t> max_inflated = std::nullopt, std::uint64_t memory = 0,
                    const disk_reserve& reserve = {});

}  // namespace heapd::daemon
