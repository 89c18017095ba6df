#include "base/error.h"

#include <cerrno>
#include <cstring>

namespace heapd {

std::string error_info::describe() const {
    if (offset == no_offset) return message;
    return message + " (at file offset " + std::to_string(offset) + ")";
}

std::unexpected<error_info> fail_errno(const std::string& what, const std::string& path) {
    int err = errno;
    return fail(error_code::io, what + " " + path + ": " + std::strerror(err));
}

} // namespace heapd
