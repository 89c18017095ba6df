#pragma once
// A child process, started and waited for in one way by every caller: forked to run a function
// (work that takes another user's ids, joins another namespace or traces a process) or spawned to
// run a program. What it sends comes through one channel, a stream socket pair (bytes and passed
// descriptors), read until the child closes its end or a bound ends the reading: a deadline, a
// silence limit, a cancel check, or the caller. A child past a bound is killed (SIGKILL); a child
// is always reaped, by wait() or by the destructor.
//
// A forked child runs in a copy of a process that may have threads: its body may make system calls
// only (no allocation, no locks), and everything it needs is prepared before the fork.
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/unique_fd.h"

namespace heapd {

// How a child ended.
struct child_exit {
    int code = -1;   // its exit status when it exited
    int signal = 0;  // the signal that ended it, or 0
    // The shell's convention: the exit status, or 128 + the signal.
    int status() const { return signal != 0 ? 128 + signal : code; }
    // "exited with status 3", "was killed by signal 9 (Killed)".
    std::string text() const;
};

// What ends the reading of a child's channel before the child closes it.
struct child_limits {
    using clock = std::chrono::steady_clock;
    clock::time_point deadline = clock::time_point::max();  // whatever the child does
    std::chrono::milliseconds silence{0};                   // without a byte from it (0: no limit)
    std::function<bool()> cancelled;                        // checked every tick
    std::chrono::milliseconds tick{200};
    std::size_t max_fds = 0;  // descriptors kept per read of the channel; the rest are closed
};

// For a forked child's body: closes every descriptor above stderr but those in keep (-1 entries
// ignored; keep is sorted in place, without allocating), so that a child with another user's ids
// holds none of the caller's files, sockets or locks.
void close_all_but(std::span<int> keep);
// The same for one or two descriptors (keep_b -1: none).
inline void close_all_but(int keep_a, int keep_b = -1) {
    int keep[] = {keep_a, keep_b};
    close_all_but(std::span<int>(keep));
}

// A program to spawn and what it gets: standard input from /dev/null, standard output into the
// channel, standard error inherited, fds[i] as descriptor 3 + i, and no other descriptor.
struct spawn_spec {
    std::string path;                             // the program
    std::vector<std::string> argv;                // argv[0] first
    std::optional<std::vector<std::string>> env;  // NAME=value each; none: the caller's environment
    std::vector<int> fds;                         // the caller's descriptors, as 3, 4, ...
    bool own_group = false;  // a process group of its own: a Ctrl-C meant for the caller is not its
};

// Why the reading of a channel ended. Every reason but `closed` kills the child.
enum class child_read_end {
    closed,     // the child closed its end (it exited, or is exiting)
    deadline,   // limits.deadline passed
    silence,    // nothing came for limits.silence
    cancelled,  // limits.cancelled() said so
    stopped,    // the caller's on_data asked to stop
    failed,     // the channel could not be read
};

// One child process and the parent's end of its channel.
class child_process {
public:
    // What a forked child runs: returns its exit status. channel is the child's end.
    using body = int (*)(int channel, const void* context);
    // What arrived: bytes, and the descriptors passed with them (the caller may take them). Returns
    // false to stop reading (the child is then killed).
    using data_handler = std::function<bool(std::string_view bytes, std::vector<unique_fd>& fds)>;

    // Forks; the child runs body(channel, context) and exits with what it returns. Errors: io.
    static result<child_process> fork(body b, const void* context);
    // Runs a program as spec says. Errors: io when it cannot be started.
    static result<child_process> spawn(const spawn_spec& spec);

    child_process(child_process&& other) noexcept;
    child_process& operator=(child_process&& other) noexcept;
    child_process(const child_process&) = delete;
    child_process& operator=(const child_process&) = delete;
    ~child_process();  // kills and reaps a child not yet waited for

    pid_t pid() const { return pid_; }

    // Reads the channel until the child closes it or a limit ends the reading (see child_read_end);
    // each read's bytes and descriptors go to on_data.
    child_read_end read(const child_limits& limits, const data_handler& on_data);
    // Everything the child sends until it closes the channel, at most max_bytes of it kept (the
    // first ones), within the limits.
    child_read_end read_all(const child_limits& limits, std::string& out, std::size_t max_bytes);
    // Sends SIGKILL (until it is reaped), to its process group too when it made one of its own.
    void kill();
    // Reaps the child (waiting for it to end); later calls give the same.
    child_exit wait();

private:
    child_process(pid_t pid, unique_fd channel) : pid_(pid), channel_(std::move(channel)) {}
    pid_t pid_ = -1;
    unique_fd channel_;
    bool reaped_ = false;
    child_exit exit_;
};

}  // namespace heapd
