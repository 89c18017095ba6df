#pragma once
// The crash handler: on SIGSEGV, SIGBUS, SIGABRT, SIGFPE or SIGILL it writes the signal and a
// backtrace of the crashing thread (libunwind, local unwinding) to stderr (each line at priority
// critical when stderr is the journal) and to an optional log file, with async-signal-safe writes
// only, on an alternate stack, then lets the signal kill the process as it would have.
#include <string_view>

namespace heapd::daemon {

// Installs the handler for the process and gives the calling thread an alternate stack.
// extra_fd, when >= 0, receives the same lines as stderr (a crash log when stderr goes nowhere).
void install_crash_handler(int extra_fd = -1);

// An alternate signal stack for the thread that holds it (each thread needs its own, so the
// handler can run after a stack overflow); removed when it goes.
class alternate_stack {
public:
    alternate_stack();
    ~alternate_stack();
    alternate_stack(const alternate_stack&) = delete;
    alternate_stack& operator=(const alternate_stack&) = delete;

private:
    void* memory_ = nullptr;
};

// Test-only: crashes the process on purpose, for the test of the handler. how is "abort" (abort()),
// "thread" (a bad write on another thread) or anything else (a bad write on this thread).
[[noreturn]] void crash_for_test(std::string_view how);

}  // namespace heapd::daemon
