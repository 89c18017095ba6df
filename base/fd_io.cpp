#include "base/fd_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/unique_fd.h"

namespace heapd {

bool write_all(int fd, const void* data, std::size_t size) {
    const char* at = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::write(fd, at, size);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) errno = EIO;
        if (n <= 0) return false;
        at += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

std::optional<std::string> read_to_end(int fd, std::size_t max_bytes) {
    std::string out;
    char buffer[16384];
    while (out.size() < max_bytes) {
        const ssize_t n = ::read(fd, buffer, std::min(sizeof buffer, max_bytes - out.size()));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return std::nullopt;
        if (n == 0) break;
        out.append(buffer, static_cast<std::size_t>(n));
    }
    return out;
}

std::optional<std::string> read_small_file(const std::string& path, std::size_t max_bytes) {
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) return std::nullopt;
    return read_to_end(fd.get(), max_bytes);
}

}  // namespace heapd
