#include "base/error.h"

#include <cerrno>
#include <cstring>

namespace heapd {

std::string error_info::describe() const {
    if (offset == no_offset) return message;
    return message + " (at file offset " + std::to_string(offset) + ")";
}

const char* error_code_name(error_code code) {
    switch (code) {
    case error_code::io: return "io";
    case error_code::bad_magic: return "bad_magic";
    case error_code::bad_header: return "bad_header";
    case error_code::out_of_bounds: return "out_of_bounds";
    case error_code::unknown_tag: return "unknown_tag";
    case error_code::bad_value: return "bad_value";
    case error_code::unsupported: return "unsupported";
    case error_code::not_found: return "not_found";
    case error_code::cancelled: return "cancelled";
    case error_code::corrupt: return "corrupt";
    case error_code::no_such_process: return "no_such_process";
    case error_code::not_a_jvm: return "not_a_jvm";
    case error_code::attach_disabled: return "attach_disabled";
    case error_code::not_responding: return "not_responding";
    case error_code::permission_denied: return "permission_denied";
    case error_code::protocol: return "protocol";
    case error_code::already_traced: return "already_traced";
    case error_code::timed_out: return "timed_out";
    case error_code::jvm_refused: return "jvm_refused";
    case error_code::busy: return "busy";
    case error_code::no_space: return "no_space";
    case error_code::crashed: return "crashed";
    case error_code::out_of_memory: return "out_of_memory";
    case error_code::internal: return "internal";
    case error_code::agent_refused: return "agent_refused";
    }
    return "unknown";
}

std::optional<error_code> error_code_from_name(std::string_view name) {
    for (int c = 0; c <= static_cast<int>(error_code::agent_refused); ++c)
        if (name == error_code_name(static_cast<error_code>(c))) return static_cast<error_code>(c);
    return std::nullopt;
}

std::unexpected<error_info> fail_errno(const std::string& what, const std::string& path) {
    int err = errno;
    return fail(error_code::io, what + " " + path + ": " + std::strerror(err));
}

}  // namespace heapd
