#pragma once
// Unix stream sockets: the address of a path, and a send and a receive that carry descriptors with
// their bytes (SCM_RIGHTS). unix_address and send_with_fd are plain system calls without
// allocation, so the forked attach child may use them.
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <cstddef>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"

namespace heapd {

// The address of the socket at path; false when path is empty, holds a NUL or is longer than the
// 107 bytes sun_path holds with its terminating zero.
bool unix_address(std::string_view path, sockaddr_un& address);

// One sendmsg(2) of size bytes on socket, with fd (-1: none) attached to them, MSG_NOSIGNAL and
// retried after EINTR: what sendmsg returns. A caller sending in parts attaches fd to the first.
ssize_t send_with_fd(int socket, const void* data, std::size_t size, int fd);

// One recvmsg(2) of at most size bytes (flags as recvmsg's; MSG_CMSG_CLOEXEC always), retried after
// EINTR: what recvmsg returns. Descriptors that came with the bytes are appended to fds, in order,
// until it holds max_fds; the rest are closed (at most 16 arrive in one call, beyond which the
// kernel closes them).
ssize_t receive_with_fds(int socket, void* data, std::size_t size, int flags, std::vector<unique_fd>& fds,
                         std::size_t max_fds);

}  // namespace heapd
