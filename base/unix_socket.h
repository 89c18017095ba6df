#pragma once
// Unix stream sockets: the address of a path, and a send that carries a descriptor with its bytes
// (SCM_RIGHTS). Plain system calls, no allocation, so the forked attach child may use them.
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <cstddef>
#include <string_view>

namespace heapd {

// The address of the socket at path; false when path is empty, holds a NUL or is longer than the
// 107 bytes sun_path holds with its terminating zero.
bool unix_address(std::string_view path, sockaddr_un& address);

// One sendmsg(2) of size bytes on socket, with fd (-1: none) attached to them, MSG_NOSIGNAL and
// retried after EINTR: what sendmsg returns. A caller sending in parts attaches fd to the first.
ssize_t send_with_fd(int socket, const void* data, std::size_t size, int fd);

} // namespace heapd
