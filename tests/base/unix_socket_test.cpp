// Unix socket addresses and descriptor passing: paths that do not fit are refused, and a
// descriptor sent with bytes arrives with them and opens the same file.
#include "base/unix_socket.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

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

TEST(unix_socket, a_descriptor_travels_with_its_bytes) {
    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    unique_fd a(pair[0]), b(pair[1]);
    unique_fd file(::open("/proc/self/status", O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(file);
    ASSERT_EQ(send_with_fd(a.get(), "with", 4, file.get()), 4);
    char buffer[16];
    std::vector<unique_fd> passed;
    ASSERT_EQ(receive_with_fds(b.get(), buffer, sizeof buffer, 0, passed, 4), 4);
    ASSERT_EQ(passed.size(), 1u);
    EXPECT_EQ(std::string(buffer, 4), "with");
    struct stat one {
    }, two{};
    ASSERT_EQ(::fstat(file.get(), &one), 0);
    ASSERT_EQ(::fstat(passed[0].get(), &two), 0);
    EXPECT_EQ(one.st_ino, two.st_ino);
    EXPECT_EQ(::fcntl(passed[0].get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);

    ASSERT_EQ(send_with_fd(a.get(), "bare", 4, -1), 4);
    ASSERT_EQ(receive_with_fds(b.get(), buffer, sizeof buffer, 0, passed, 4), 4);
    EXPECT_EQ(passed.size(), 1u);
}

// Descriptors beyond what the receiver keeps are closed, not leaked into the receiving process.
TEST(unix_socket, descriptors_beyond_the_bound_are_closed) {
    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    unique_fd a(pair[0]), b(pair[1]);
    unique_fd file(::open("/proc/self/status", O_RDONLY | O_CLOEXEC));
    // Two descriptors in one message (send_with_fd carries one): built by hand.
    const int two[2] = {file.get(), file.get()};
    char byte = 'x';
    iovec io{&byte, 1};
    msghdr m{};
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof two)] = {};
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof two);
    std::memcpy(CMSG_DATA(c), two, sizeof two);
    ASSERT_EQ(::sendmsg(a.get(), &m, 0), 1);
    auto open_fds = [] {
        std::size_t n = 0;
        for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
        return n;
    };
    const std::size_t before = open_fds();
    std::vector<unique_fd> kept;
    char buffer[4];
    ASSERT_EQ(receive_with_fds(b.get(), buffer, sizeof buffer, 0, kept, 1), 1);
    EXPECT_EQ(kept.size(), 1u);
    EXPECT_EQ(open_fds(), before + 1);
}

TEST(unix_socket, a_send_on_a_closed_peer_fails_without_a_signal) {
    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    unique_fd a(pair[0]);
    ::close(pair[1]);
    EXPECT_EQ(send_with_fd(a.get(), "x", 1, -1), -1);
    EXPECT_EQ(errno, EPIPE);
}

}  // namespace
}  // namespace heapd
