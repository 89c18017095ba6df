// Unix socket addresses and descriptor passing: paths that do not fit are refused, and a
// descriptor sent with bytes arrives with them and opens the same file.
#include "base/unix_socket.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "base/unique_fd.h"

namespace heapd {
namespace {

TEST(unix_socket, an_address_holds_107_bytes_and_no_nul) {
    sockaddr_un a{};
    EXPECT_TRUE(unix_address("/run/heapd/heapd.sock", a));
    EXPECT_EQ(a.sun_family, AF_UNIX);
    EXPECT_STREQ(a.sun_path, "/run/heapd/heapd.sock");
    EXPECT_TRUE(unix_address(std::string(107, 'a'), a));
    EXPECT_FALSE(unix_address(std::string(108, 'a'), a));
    EXPECT_FALSE(unix_address("", a));
    EXPECT_FALSE(unix_address(std::string("/tmp/a\0b", 8), a));
}

// Receives bytes and at most one descriptor.
ssize_t receive(int socket, char* buffer, std::size_t size, int& fd) {
    iovec io{buffer, size};
    msghdr m{};
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(socket, &m, MSG_CMSG_CLOEXEC);
    fd = -1;
    for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return n;
}

TEST(unix_socket, a_descriptor_travels_with_its_bytes) {
    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    unique_fd a(pair[0]), b(pair[1]);
    unique_fd file(::open("/proc/self/status", O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(file);
    ASSERT_EQ(send_with_fd(a.get(), "with", 4, file.get()), 4);
    char buffer[16];
    int got = -1;
    ASSERT_EQ(receive(b.get(), buffer, sizeof buffer, got), 4);
    unique_fd passed(got);
    ASSERT_TRUE(passed);
    EXPECT_EQ(std::string(buffer, 4), "with");
    struct stat one {}, two {};
    ASSERT_EQ(::fstat(file.get(), &one), 0);
    ASSERT_EQ(::fstat(passed.get(), &two), 0);
    EXPECT_EQ(one.st_ino, two.st_ino);

    ASSERT_EQ(send_with_fd(a.get(), "bare", 4, -1), 4);
    ASSERT_EQ(receive(b.get(), buffer, sizeof buffer, got), 4);
    EXPECT_EQ(got, -1);
}

TEST(unix_socket, a_send_on_a_closed_peer_fails_without_a_signal) {
    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    unique_fd a(pair[0]);
    ::close(pair[1]);
    EXPECT_EQ(send_with_fd(a.get(), "x", 1, -1), -1);
    EXPECT_EQ(errno, EPIPE);
}

} // namespace
} // namespace heapd
