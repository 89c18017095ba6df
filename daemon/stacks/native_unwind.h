#pragma once
// Reads the stacks of the stopped threads of one process with libunwind-ptrace and names their
// frames: function names from the ELF images (libunwind), else the mapping from /proc/PID/maps,
// and for anonymous code a perf map the JVM may have written (/tmp/perf-PID.map).
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "daemon/stacks/native_stacks.h"

namespace heapd::daemon {

// A region of /proc/PID/maps.
struct mapping {
    std::uint64_t start = 0, end = 0, file_offset = 0;
    bool executable = false;
    std::string path;  // file path, "[vdso]", "[stack]", ...; "" for anonymous memory
};

// Parses the text of /proc/PID/maps.
std::vector<mapping> parse_maps(const std::string& text);

// Unwinds threads of one process; every thread passed to unwind() must be in a ptrace stop of the
// calling thread. Function names are cached by address across threads.
class native_unwinder {
public:
    // Reads /proc/PID/maps and, if present, /proc/PID/root/tmp/perf-NSPID.map.
    explicit native_unwinder(pid_t pid);
    ~native_unwinder();
    native_unwinder(const native_unwinder&) = delete;
    native_unwinder& operator=(const native_unwinder&) = delete;

    // The frames of tid, innermost first, at most max_frames; error says why they end early.
    std::vector<native_frame> unwind(pid_t tid, unsigned max_frames, std::string& error);

private:
    struct state;
    std::unique_ptr<state> state_;
};

}  // namespace heapd::daemon
