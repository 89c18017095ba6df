#pragma once
// The JVM's own thread dump (the attach mechanism's `threaddump`: Java stacks, states and locks).
#include <sys/types.h>

#include <chrono>
#include <expected>
#include <string>

#include "base/error.h"

namespace heapd::attach {

// Asks the JVM pid for its thread dump, waiting at most about timeout. A JVM that is stopped, at a
// long safepoint or otherwise silent gives error_code::not_responding; a process that does not
// handle SIGQUIT is never signalled (error_code::not_a_jvm).
result<std::string> java_thread_dump(pid_t pid, std::chrono::milliseconds timeout);

}  // namespace heapd::attach
