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

result<void> ensure_free_space(const std::string& dir, std::uint64_t need, std::uint64_t reserve,
                               std::string_view what) {
    auto free_space = free_bytes(dir);
    if (!free_space) return std::unexpected(free_space.error());
    if (need > *free_space || *free_space - need < reserve)
        return fail(error_code::no_space, no_space_message(dir, need, *free_space, reserve, what));
    return {};
}

}  // namespace heapd::daemon
