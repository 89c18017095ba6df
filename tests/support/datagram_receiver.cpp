#include "support/datagram_receiver.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace heapd::test {

datagram_receiver::datagram_receiver(const std::string& path) {
    int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, sizeof addr.sun_path - 1);
    int on = 1;
    if (fd < 0 || path.size() >= sizeof addr.sun_path || ::pipe2(stop_pipe_, O_CLOEXEC) != 0 ||
        ::setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0 ||
        ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        if (fd >= 0) ::close(fd);
        return;
    }
    ::chmod(path.c_str(), 0666);
    fd_ = fd;
    thread_ = std::thread([this] { run(); });
}

datagram_receiver::~datagram_receiver() {
    if (thread_.joinable()) {
        (void)::write(stop_pipe_[1], "x", 1);
        thread_.join();
    }
    for (int fd : {fd_, stop_pipe_[0], stop_pipe_[1]})
        if (fd >= 0) ::close(fd);
}

void datagram_receiver::run() {
    std::vector<char> buffer(1 << 20);
    for (;;) {
        pollfd p[2] = {{fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
        if (::poll(p, 2, -1) < 0) continue;
        if (p[1].revents != 0) return;
        iovec iov{buffer.data(), buffer.size()};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred)) + CMSG_SPACE(16 * sizeof(int))] = {};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        ssize_t n = ::recvmsg(fd_, &msg, MSG_CMSG_CLOEXEC);
        if (n < 0) continue;
        datagram d{std::string(buffer.data(), static_cast<std::size_t>(n)), -1};
        for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
                ucred cred{};
                std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
                d.sender = cred.pid;
            } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                // Descriptors (journald's memfd for big entries) are not used by these tests.
                const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (std::size_t i = 0; i < count; ++i) {
                    int passed = -1;
                    std::memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof passed);
                    ::close(passed);
                }
            }
        }
        std::lock_guard lock(mutex_);
        received_.push_back(std::move(d));
    }
}

std::vector<datagram> datagram_receiver::received() const {
    std::lock_guard lock(mutex_);
    return received_;
}

bool datagram_receiver::wait_for(const std::function<bool(const std::vector<datagram>&)>& done,
                                 std::chrono::milliseconds timeout) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        if (done(received())) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

}  // namespace heapd::test
