#pragma once
// Whole writes and whole reads of descriptors: the one loop of each. Plain write(2) and read(2)
// calls (write_all allocates nothing), so a child forked from a multithreaded process may call them.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace heapd {

// Writes all size bytes (retrying after EINTR and short writes); false with errno set when a
// write fails or writes nothing.
bool write_all(int fd, const void* data, std::size_t size);
inline bool write_all(int fd, std::string_view bytes) { return write_all(fd, bytes.data(), bytes.size()); }

// Reads fd to its end (files in /proc have no size to ask first), keeping at most max_bytes and
// leaving the rest unread; nothing when a read fails (errno set).
std::optional<std::string> read_to_end(int fd, std::size_t max_bytes);

// The contents of a small file of the system's own, such as one in /proc, at most max_bytes: opened
// with O_NOFOLLOW, nothing when it cannot be opened or read. For a file in a directory someone else
// controls, open it safely and use read_to_end.
std::optional<std::string> read_small_file(const std::string& path, std::size_t max_bytes);

}  // namespace heapd
