#include "base/unix_socket.h"

#include <cerrno>
#include <cstring>

namespace heapd {

bool unix_address(std::string_view path, sockaddr_un& address) {
    address = sockaddr_un{};
    address.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof address.sun_path || path.find('\0') != std::string_view::npos)
        return false;
    std::memcpy(address.sun_path, path.data(), path.size());
    return true;
}

ssize_t send_with_fd(int socket, const void* data, std::size_t size, int fd) {
    iovec io{const_cast<void*>(data), size};
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (fd >= 0) {
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        cmsghdr* c = CMSG_FIRSTHDR(&message);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    ssize_t n;
    while ((n = ::sendmsg(socket, &message, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
    return n;
}

ssize_t receive_with_fds(int socket, void* data, std::size_t size, int flags, std::vector<unique_fd>& fds,
                         std::size_t max_fds) {
    constexpr std::size_t most = 16;
    iovec io{data, size};
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(most * sizeof(int))];
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    ssize_t n;
    while ((n = ::recvmsg(socket, &message, flags | MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
    if (n < 0) return n;
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
            int received = -1;
            std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof received);
            unique_fd owned(received);
            if (fds.size() < max_fds) fds.push_back(std::move(owned));
        }
    }
    return n;
}

}  // namespace heapd
