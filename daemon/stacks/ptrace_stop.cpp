#include "daemon/stacks/ptrace_stop.h"

#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <set>

#include "daemon/stacks/proc_files.h"

namespace heapd::daemon {
namespace {

bool exited_state(char state) { return state == '\0' || state == 'Z' || state == 'X' || state == 'x'; }

bool is_stop_signal(int sig) { return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU; }

// Why PTRACE_SEIZE of the first thread of pid was refused, for people.
error_info refusal(pid_t pid, int err) {
    std::string tracer = status_field(pid, "TracerPid");
    if (!tracer.empty() && tracer != "0")
        return {error_code::already_traced,
                "process " + std::to_string(pid) + " is already traced by process " + tracer + " (a debugger?)"};
    if (err == EPERM)
        return {error_code::permission_denied, "may not trace process " + std::to_string(pid) + " (" +
                                                   std::strerror(err) +
                                                   "): run as its user or as root (CAP_SYS_PTRACE)"};
    return {error_code::io, "PTRACE_SEIZE of process " + std::to_string(pid) + ": " + std::strerror(err)};
}

// Records what waitpid reported for t; true if t exited before it was stopped.
bool note_event(traced_thread& t, int status) {
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
        bool unseen = !t.gone && !t.stopped;
        t.gone = true;
        t.stopped = false;
        return unseen;
    }
    if (WIFSTOPPED(status) && !t.stopped) {
        t.stopped = true;
        int sig = WSTOPSIG(status);
        if ((status >> 16) == PTRACE_EVENT_STOP)
            t.group_stop = is_stop_signal(sig);  // else SIGTRAP: our PTRACE_INTERRUPT
        else if ((status >> 16) == 0)
            t.pending_signal = sig;  // signal-delivery-stop: hand the signal back on detach
    }
    return false;
}

// The signal to hand back when detaching t: group stops and our own interrupt carry none; a
// signal-delivery-stop hands its signal back (SIGSTOP among them, which then stops the process as
// it would have).
long detach_signal(const traced_thread& t) { return t.group_stop ? 0 : t.pending_signal; }

}  // namespace

result<void> process_stop::stop(pid_t pid, clock::time_point deadline, const native_stack_options& options) {
    std::set<pid_t> skipped;  // listed, but exited before they could be seized
    for (;;) {
        std::vector<pid_t> tids = list_tasks(pid);
        if (tids.empty() && threads_.empty())
            return fail(error_code::no_such_process, "no process " + std::to_string(pid));
        bool added = false;
        for (pid_t tid : tids) {
            if (threads_.contains(tid) || skipped.contains(tid)) continue;
            if (options.stage_hook) options.stage_hook(capture_stage::listed, tid);
            char state = thread_state(pid, tid);
            if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
                int err = errno;
                skipped.insert(tid);
                if (err == ESRCH || exited_state(thread_state(pid, tid))) {
                    ++exited_;
                    continue;
                }
                if (threads_.empty()) return std::unexpected(refusal(pid, err));
                // A later thread refused while earlier ones were seized: only an exiting one can.
                ++exited_;
                continue;
            }
            if (threads_.empty()) started_ = clock::now();
            threads_[tid] = traced_thread{.tid = tid, .state_before = exited_state(state) ? '?' : state};
            added = true;
            if (options.stage_hook) options.stage_hook(capture_stage::seized, tid);
            // ESRCH here means the thread exited after the seize; waitpid reports that exit.
            ::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
        }
        if (!added) break;
        wait_for_stops(deadline);
        // Threads can only be created by threads still running: once all are stopped, one more
        // listing without newcomers ends the loop.
        if (clock::now() >= deadline) break;
    }
    if (std::none_of(threads_.begin(), threads_.end(), [](const auto& t) { return t.second.stopped; }))
        return fail(error_code::no_such_process, "process " + std::to_string(pid) + " exited");
    return {};
}

void process_stop::wait_for_stops(clock::time_point deadline) {
    auto pending = [this] {
        return std::any_of(threads_.begin(), threads_.end(),
                           [](const auto& t) { return !t.second.stopped && !t.second.gone; });
    };
    useconds_t pause = 50;
    while (pending()) {
        int status = 0;
        pid_t tid = ::waitpid(-1, &status, __WALL | WNOHANG);
        if (tid < 0) {
            if (errno == EINTR) continue;
            // ECHILD: no tracee is left at all, so every pending thread has gone.
            for (auto& [_, t] : threads_)
                if (!t.stopped && !t.gone) {
                    t.gone = true;
                    ++exited_;
                }
            return;
        }
        if (tid == 0) {
            if (clock::now() >= deadline) return;
            ::usleep(pause);
            pause = std::min<useconds_t>(pause * 2, 5000);
            continue;
        }
        pause = 50;
        auto it = threads_.find(tid);
        if (it == threads_.end()) continue;
        if (note_event(it->second, status)) ++exited_;
    }
}

unsigned process_stop::not_stopped() const {
    return static_cast<unsigned>(std::count_if(threads_.begin(), threads_.end(),
                                               [](const auto& t) { return !t.second.stopped && !t.second.gone; }));
}

unsigned process_stop::release() {
    if (released_all_) return 0;
    released_all_ = true;
    // Threads seized but not yet stopped (in an uninterruptible sleep) cannot be detached; they
    // trap as soon as they leave it, so give them a moment.
    if (not_stopped() > 0) wait_for_stops(clock::now() + std::chrono::milliseconds(100));
    unsigned failed = 0;
    for (auto& [tid, t] : threads_) {
        if (t.gone) continue;
        if (::ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void*>(detach_signal(t))) == 0) continue;
        // ESRCH: killed meanwhile, or not stopped yet (the kernel detaches it when we exit).
        int status = 0;
        if (::waitpid(tid, &status, __WALL | WNOHANG) == tid) {
            note_event(t, status);
            if (t.gone) continue;
            if (t.stopped && ::ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void*>(detach_signal(t))) == 0)
                continue;
        }
        ++failed;
    }
    // Reap the exit notices of threads that died while traced.
    int status = 0;
    while (::waitpid(-1, &status, __WALL | WNOHANG) > 0) {}
    released_ = clock::now();
    return failed;
}

}  // namespace heapd::daemon
