#pragma once
// Small readers of /proc for the native-stack capture. They use plain open/read (no iostreams, no
// locale), so they are safe in a child forked from a multithreaded process.
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace heapd::daemon {

// At most this much of a /proc file is read (a big process's maps run to a few MiB).
inline constexpr std::size_t max_proc_file_bytes = 16u << 20;

// The thread ids in /proc/PID/task, ascending; empty if the process is gone or unreadable.
std::vector<pid_t> list_tasks(pid_t pid);

// The state letter of /proc/PID/task/TID/stat (R, S, D, T, t, Z, ...), or '\0' if the thread is gone.
char thread_state(pid_t pid, pid_t tid);

// /proc/PID/task/TID/comm without its newline ("" if gone).
std::string thread_name(pid_t pid, pid_t tid);

// The value after "Key:" in /proc/PID/status, trimmed ("" if absent).
std::string status_field(pid_t pid, const std::string& key);

// The pid as the process's own pid namespace sees it (last NSpid entry); pid itself if unknown.
pid_t namespace_pid(pid_t pid);

}  // namespace heapd::daemon
