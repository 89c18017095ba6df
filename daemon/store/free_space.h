#pragma once
// The free-space guard: refuse to write what would not fit, with a message that says so.
#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"

namespace heapd::daemon {

// Bytes an unprivileged writer may still use on the file system holding path (statvfs f_bavail).
result<std::uint64_t> free_bytes(const std::string& path);

// Fails with error_code::unsupported and a clear message when need bytes (an estimate, for what)
// plus reserve would not fit in the free space of the file system holding dir.
result<void> ensure_free_space(const std::string& dir, std::uint64_t need, std::uint64_t reserve,
                               std::string_view what);

// The message for a refusal; free_space and dir as measured.
std::string no_space_message(const std::string& dir, std::uint64_t need, std::uint64_t free_space,
                             std::uint64_t reserve, std::string_view what);

}  // namespace heapd::daemon
