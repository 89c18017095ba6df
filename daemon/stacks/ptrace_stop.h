#pragma once
// Every thread of a process held stopped by ptrace, released on destruction: the guard under which
// native stacks are read. Only for a process that is itself single-threaded (the forked tracer of
// native_stacks.cpp): ptrace ties each tracee to the thread that seized it.
#include <sys/types.h>

#include <chrono>
#include <expected>
#include <map>
#include <string>
#include <vector>

#include "daemon/stacks/native_stacks.h"

namespace heapd::daemon {

// One thread seized by a process_stop.
struct traced_thread {
    pid_t tid = 0;
    char state_before = '?';  // its state letter before it was seized
    bool stopped = false;     // in a ptrace stop: its registers and memory may be read
    bool gone = false;        // exited after it was seized
    bool group_stop = false;  // its stop was the process's group stop (SIGSTOP, SIGTSTP, ...)
    int pending_signal = 0;   // the signal it was stopped delivering; delivered again on release
};

// Holds every thread of one process stopped with PTRACE_SEIZE and PTRACE_INTERRUPT; release() (and
// the destructor) detaches each one, handing back any signal it was receiving. A process that was
// in a group stop re-enters it on detach (the kernel re-arms the stop), a running one runs on.
class process_stop {
public:
    using clock = std::chrono::steady_clock;

    process_stop() = default;
    ~process_stop() { release(); }
    process_stop(const process_stop&) = delete;
    process_stop& operator=(const process_stop&) = delete;

    // Seizes and interrupts every thread of /proc/PID/task, again for threads that appear
    // meanwhile, until all are stopped or gone or the deadline passes (threads still running then
    // stay in threads() with stopped false). Fails only when the process itself cannot be held.
    result<void> stop(pid_t pid, clock::time_point deadline, const native_stack_options& options);

    // Detaches every seized thread still held; idempotent. Returns how many could not be detached
    // (not in a ptrace stop); the kernel releases those when this process exits.
    unsigned release();

    // The seized threads by tid.
    const std::map<pid_t, traced_thread>& threads() const { return threads_; }
    // Threads listed that exited before they could be seized or stopped.
    unsigned exited() const { return exited_; }
    // Threads seized that had not stopped by the deadline.
    unsigned not_stopped() const;
    // When the first thread was seized, and when release() finished.
    clock::time_point started() const { return started_; }
    clock::time_point released() const { return released_; }

private:
    // Reaps ptrace events until every seized thread is stopped or gone, or the deadline passes.
    void wait_for_stops(clock::time_point deadline);

    std::map<pid_t, traced_thread> threads_;
    unsigned exited_ = 0;
    bool released_all_ = false;
    clock::time_point started_{}, released_{};
};

}  // namespace heapd::daemon
