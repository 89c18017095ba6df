#pragma once
// The JVM's own thread dump (the attach mechanism's `threaddump`: Java stacks, states and locks).
#include <sys/types.h>

#include <chrono>
#include <expected>
#include <string>

#include "attach/attach_error.h"

namespace heapd::cmd {

// Asks the JVM pid for its thread dump, waiting at most about timeout. A JVM that is stopped, at a
// long safepoint or otherwise silent gives attach_code::not_responding; a process that does not
// handle SIGQUIT is never signalled (attach_code::not_a_jvm).
std::expected<std::string, attach::attach_error> java_thread_dump(pid_t pid, std::chrono::milliseconds timeout);

} // namespace heapd::cmd
