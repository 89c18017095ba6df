#pragma once
// Work that must not run in the calling process (it takes another user's ids, or joins another
// namespace), run in a forked child (child_process.h) that answers through a socket pair with a few
// bytes and at most one descriptor, bounded in time: a child that overruns its limit is killed
// (SIGKILL) and reaped.
// The child runs after fork() in a process that may have threads: its body may make system calls
// only (no allocation, no locks).
#include <chrono>
#include <cstddef>
#include <string>

#include "base/child_process.h"  // close_all_but, for bodies
#include "base/error.h"
#include "base/unique_fd.h"

namespace heapd {

// What the child sent back before it exited.
struct child_answer {
    std::string bytes;   // at most max_bytes of what it wrote
    unique_fd fd;        // the first descriptor it passed (SCM_RIGHTS), or none
    int exit_code = -1;  // its exit status, or 128 + signal
};

// The child's side: body(socket) writes its answer to socket (write_all, send_with_fd) and returns
// the child's exit code. It must not return to the caller's code in any other way.
using child_body = int (*)(int socket, const void* context);

// Forks, runs body(socket, context) in the child, and collects its answer until it exits or
// `limit` passes (then: timed_out, the child killed). Errors: io when the fork or socket pair fails.
result<child_answer> call_in_child(child_body body, const void* context, std::chrono::milliseconds limit,
                                   std::size_t max_bytes = 4096);

}  // namespace heapd
