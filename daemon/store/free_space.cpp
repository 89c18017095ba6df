#include "daemon/store/free_space.h"

#include <sys/statvfs.h>

#include "formats/report/quantities.h"

namespace heapd::daemon {

result<std::uint64_t> free_bytes(const std::string& path) {
    struct statvfs st {};
    if (::statvfs(path.c_str(), &st) != 0) return fail_errno("cannot measure the free space of", path);
    return static_cast<std::uint64_t>(st.f_bavail) * static_cast<std::uint64_t>(st.f_frsize);
}

std::string no_space_message(const std::string& dir, std::uint64_t need, std::uint64_t free_space,
                             std::uint64_t reserve, std::string_view what) {
    return "not enough free space in " + dir + " for " + std::string(what) + ": about " + text::human_bytes(need) +
           " needed (estimated), " + text::human_bytes(free_space) + " free, " + text::human_bytes(reserve) +
           " kept in reserve; free some space or remove old dumps (heapctl rm)";
}

namespace {

// The free bytes and the reserve on the file system holding path.
struct disk_room {
    std::uint64_t free = 0, reserve = 0;
};
result<disk_room> room_on(const std::string& path, const disk_reserve& reserve) {
    struct statvfs st {};
    if (::statvfs(path.c_str(), &st) != 0) return fail_errno("cannot measure the free space of", path);
    const std::uint64_t block = st.f_frsize;
    return disk_room{static_cast<std::uint64_t>(st.f_bavail) * block,
                     reserve.on(static_cast<std::uint64_t>(st.f_blocks) * block)};
}

}  // namespace

result<std::uint64_t> bytes_beyond(const std::string& path, const disk_reserve& reserve) {
    auto room = room_on(path, reserve);
    if (!room) return std::unexpected(room.error());
    return room->free > room->reserve ? room->free - room->reserve : 0;
}

result<void> ensure_free_space(const std::string& dir, std::uint64_t need, const disk_reserve& reserve,
                               std::string_view what) {
    auto room = room_on(dir, reserve);
    if (!room) return std::unexpected(room.error());
    if (need > room->free || room->free - need < room->reserve)
        return fail(error_code::no_space, no_space_message(dir, need, room->free, room->reserve, what));
    return {};
}

}  // namespace heapd::daemon
