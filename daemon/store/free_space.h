#pragma once
// The free-space guard: refuse to write what would not fit, with a message that says so.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"

namespace heapd::daemon {

// The free space heapd leaves on a disk it writes to (the store's dumps, an analysis's spill): the
// larger of a share of the disk and a floor, so that it never fills the disk the host's JVMs and
// logs need (daemon.disk_reserve, daemon.disk_reserve_percent).
struct disk_reserve {
    unsigned percent = 5;
    std::uint64_t floor = std::uint64_t{1} << 30;
    // The bytes to leave free on a disk of disk_bytes.
    std::uint64_t on(std::uint64_t disk_bytes) const {
        return std::max(floor, disk_bytes / 100 * std::min(percent, 100u));
    }
};

// Bytes an unprivileged writer may still use on the file system holding path (statvfs f_bavail).
result<std::uint64_t> free_bytes(const std::string& path);

// The free bytes on the file system holding path less what reserve leaves there (0 when less).
result<std::uint64_t> bytes_beyond(const std::string& path, const disk_reserve& reserve);

// Fails with error_code::no_space and a clear message when need bytes (an estimate, for what) plus
// the reserve would not fit in the free space of the file system holding dir.
result<void> ensure_free_space(const std::string& dir, std::uint64_t need, const disk_reserve& reserve,
                               std::string_view what);

// The message for a refusal; free_space and dir as measured.
std::string no_space_message(const std::string& dir, std::uint64_t need, std::uint64_t free_space,
                             std::uint64_t reserve, std::string_view what);

}  // namespace heapd::daemon
