#pragma once
// Errors of the attach library: a code a caller can act on and a message for people.
#include <expected>
#include <string>

namespace heapd::attach {

// Why talking to a JVM (or finding one) failed.
enum class attach_code {
    no_such_process,    // the pid does not exist (or exited meanwhile)
    not_a_jvm,          // the process is no HotSpot JVM, or it does not handle SIGQUIT (never signalled)
    attach_disabled,    // -XX:+DisableAttachMechanism, or no attach listener could be started
    not_responding,     // no answer within the timeout: stopped, at a long safepoint, or in an OOM hook
    permission_denied,  // the caller may not act on this process
    protocol,           // the JVM answered something this client does not understand
    io,                 // a system call failed
};

// An attach failure; message says what was tried and what happened.
struct attach_error {
    attach_code code = attach_code::io;
    std::string message;
};

template <class T>
using attach_result = std::expected<T, attach_error>;

inline std::unexpected<attach_error> attach_fail(attach_code code, std::string message) {
    return std::unexpected(attach_error{code, std::move(message)});
}

// A short stable name of the code ("not_responding"), for JSON and logs.
const char* attach_code_name(attach_code code);

} // namespace heapd::attach
