#include "daemon/runtime/log_destination.h"

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <string_view>

namespace heapd::daemon {

bool stderr_is_journal() {
    const char* value = std::getenv("JOURNAL_STREAM");
    if (value == nullptr) return false;
    const std::string_view text(value);
    const auto colon = text.find(':');
    if (colon == std::string_view::npos) return false;
    unsigned long long device = 0, inode = 0;
    const char* end = text.data() + text.size();
    auto d = std::from_chars(text.data(), text.data() + colon, device);
    auto i = std::from_chars(text.data() + colon + 1, end, inode);
    if (d.ec != std::errc() || d.ptr != text.data() + colon || i.ec != std::errc() || i.ptr != end) return false;
    struct stat st {};
    if (::fstat(STDERR_FILENO, &st) != 0) return false;
    return static_cast<unsigned long long>(st.st_dev) == device && static_cast<unsigned long long>(st.st_ino) == inode;
}

log_destination choose_log_destination(bool foreground) {
    if (stderr_is_journal()) return log_destination::journal;
    return foreground ? log_destination::stderr_text : log_destination::syslog;
}

}  // namespace heapd::daemon
