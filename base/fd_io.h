#pragma once
// Writing to a descriptor, whole: the one loop every writer uses. Plain write(2) calls, no
// allocation, so a child forked from a multithreaded process may call it.
#include <cstddef>
#include <string_view>

namespace heapd {

// Writes all size bytes (retrying after EINTR and short writes); false with errno set when a
// write fails or writes nothing.
bool write_all(int fd, const void* data, std::size_t size);
inline bool write_all(int fd, std::string_view bytes) { return write_all(fd, bytes.data(), bytes.size()); }

} // namespace heapd
