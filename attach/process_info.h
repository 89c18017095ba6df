#pragma once
// What /proc tells about a process before attaching to it: credentials, namespace pid, state,
// signal dispositions, start time, whether HotSpot is loaded and whether it shares our filesystem.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace heapd::attach {

// "/proc/PID/leaf" (leaf may hold more: "task/12/stat"); "/proc/PID" when leaf is empty.
std::string proc_path(pid_t pid, std::string_view leaf = {});

// A snapshot of /proc/PID/status and /proc/PID/stat.
struct process_info {
    pid_t pid = -1;     // as the caller sees it
    pid_t ns_pid = -1;  // in the innermost pid namespace (last NSpid): the pid the JVM knows itself by
    uid_t euid = 0;     // effective ids: the attach listener accepts only these (or root)
    gid_t egid = 0;
    char state = '?';               // R, S, D, T (stopped), t (traced), Z (zombie), ...
    std::uint64_t sig_caught = 0;   // SigCgt: signals with a handler, bit n-1 for signal n
    std::uint64_t sig_ignored = 0;  // SigIgn
    std::uint64_t start_time = 0;   // clock ticks since boot (stat field 22); with pid, names the process
    std::string name;               // Name: (comm)

    // Whether the process has a handler for SIGQUIT (what starts HotSpot's attach listener).
    bool handles_sigquit() const;
    // Stopped by a signal or a tracer: it answers nothing until resumed.
    bool stopped() const { return state == 'T' || state == 't'; }
};

// Reads /proc/PID/status and /proc/PID/stat; no_such_process when the pid does not exist or is a zombie.
result<process_info> read_process_info(pid_t pid);

// The wait status (waitpid(2)) of a process that has exited and not yet been reaped by its parent
// (a zombie), from field 52 of /proc/PID/stat; nothing when the pid is not that zombie (start_time
// names the process) or the kernel is older than 3.5.
std::optional<int> zombie_wait_status(pid_t pid, std::uint64_t start_time);

// Whether a HotSpot libjvm.so is mapped into the process; nullopt when its maps cannot be read.
std::optional<bool> maps_libjvm(pid_t pid);

// Whether the process sees the same filesystem as the caller: same mount namespace and same root.
bool same_filesystem_view(pid_t pid);

}  // namespace heapd::attach
