#pragma once
// Test helpers that look at a live process from outside (its threads' states, names and tracers),
// and build the JNI library of tests/java/NativeSpin.java.
#include <sys/types.h>
#include <string>
#include <vector>

namespace heapd::test {

// The thread ids of /proc/PID/task, ascending.
std::vector<pid_t> task_ids(pid_t pid);

// The state letter of a thread (R, S, T, t, Z, ...), or '\0' if it is gone.
char task_state(pid_t pid, pid_t tid);

// /proc/PID/task/TID/comm without its newline.
std::string task_name(pid_t pid, pid_t tid);

// Whether the TracerPid of every thread of pid is 0.
bool untraced(pid_t pid);

// Waits (up to 10 s) until every thread of pid is (or, with want false, none is) in state.
bool wait_for_states(pid_t pid, char state, bool want = true);

// Sends SIGSTOP on construction (and waits until every thread is stopped), SIGCONT on destruction.
class stopped_process {
public:
    explicit stopped_process(pid_t pid);
    ~stopped_process() { resume(); }
    stopped_process(const stopped_process&) = delete;
    stopped_process& operator=(const stopped_process&) = delete;
    bool stopped() const { return stopped_; }
    void resume();

private:
    pid_t pid_;
    bool stopped_ = false, resumed_ = false;
};

// Compiles tests/java/native_spin.c into dir/libnative_spin.so (gcc against the JDK's headers);
// returns its path, or "" with the compiler's message in error.
std::string build_native_spin_library(const std::string& dir, std::string& error);

}  // namespace heapd::test
