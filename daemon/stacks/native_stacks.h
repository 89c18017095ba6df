#pragma once
// Native stacks of every thread of a process, read with ptrace and libunwind while the process is
// briefly stopped: what an operator needs when a JVM cannot answer (stopped, hung at a safepoint).
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <string>
#include <vector>

#include "base/error.h"

namespace heapd::daemon {

// One frame: its instruction address, the function it lies in (when the ELF image names it) and
// the mapping it lies in (a file and the offset into it, or "[anon]" for code without a file:
// JIT-compiled and interpreter code of a JVM).
struct native_frame {
    std::uint64_t ip = 0;
    std::string symbol;               // demangled function name; empty when unknown
    std::uint64_t symbol_offset = 0;  // ip - start of the function
    std::string symbol_source;        // "elf" (libunwind) or "perf-map" (/tmp/perf-PID.map); empty if none
    std::string module;               // mapped file path, "[anon]", "[vdso]", ...; empty if ip is unmapped
    std::uint64_t module_offset = 0;  // offset of ip in the mapped file (file-backed mappings only)
};

// One thread's stack, innermost frame first.
struct native_thread {
    pid_t tid = 0;
    std::string name;        // /proc/PID/task/TID/comm
    char state = '?';        // state letter of /proc/PID/task/TID/stat before it was stopped
    int pending_signal = 0;  // a signal it was receiving when stopped (delivered again on detach)
    std::vector<native_frame> frames;
    std::string error;  // why the stack is missing or ends early; empty if it unwound to its end
};

// The stacks of one process at one moment.
struct native_stacks {
    pid_t pid = 0;
    std::string process_name;                  // /proc/PID/comm
    bool was_stopped = false;                  // the process was in a group stop (SIGSTOP) before: it is left stopped
    std::chrono::microseconds stopped_for{0};  // from the first thread stopped to the last one released
    std::vector<native_thread> threads;        // by tid, the main thread first
    unsigned exited_threads = 0;               // threads listed that exited before they could be stopped
};

// Points during a capture where native_stack_options::stage_hook is called (in the tracing process).
enum class capture_stage {
    listed,   // a thread was read from /proc/PID/task and is about to be seized
    seized,   // a thread was seized and is about to be interrupted
    stopped,  // every thread is stopped, before unwinding (tid is the pid)
};

// How to capture.
struct native_stack_options {
    std::chrono::milliseconds timeout{10000};  // for stopping (at most half of it), unwinding and releasing
    unsigned max_frames = 256;                 // per thread
    // Called in the forked tracing process at each stage; lets tests make threads exit at that moment.
    std::function<void(capture_stage, pid_t tid)> stage_hook;
};

// Stops every thread of pid with ptrace (PTRACE_SEIZE and PTRACE_INTERRUPT), unwinds each with
// libunwind-ptrace, and releases them all (PTRACE_DETACH) on every path. The ptrace work happens in
// a forked child process, so no thread of the caller is ever a tracer; if that child overruns the
// time limit it is killed, and the kernel then releases whatever it still held. A process that was
// stopped by SIGSTOP before is stopped again after; a running one runs on.
// Fails with no_such_process, permission_denied (ptrace refused: another user without
// CAP_SYS_PTRACE, or a stricter policy), already_traced, timed_out or io.
result<native_stacks> capture_native_stacks(pid_t pid, const native_stack_options& options);

}  // namespace heapd::daemon
