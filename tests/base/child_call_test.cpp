// Work in a forked child: its answer and descriptor come back, a child past its limit is killed, and
// the child holds none of the caller's descriptors but the ones it keeps.
#include "base/child_call.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "base/fd_io.h"
#include "base/unix_socket.h"

namespace heapd {
namespace {

int answer_with_null(int socket, const void* context) {
    close_all_but(socket);
    const char* text = static_cast<const char*>(context);
    const int fd = ::open("/dev/null", O_RDONLY | O_NOCTTY | O_CLOEXEC);
    send_with_fd(socket, text, std::strlen(text), fd);
    return 7;
}

int sleep_long(int, const void*) {
    ::sleep(30);
    return 0;
}

// Says how many descriptors above stderr it still has.
int count_descriptors(int socket, const void* context) {
    close_all_but(socket, *static_cast<const int*>(context));
    int open = 0;
    for (int fd = 3; fd < 1024; ++fd) open += ::fcntl(fd, F_GETFD) != -1;
    const std::string text = std::to_string(open);
    write_all(socket, text);
    return 0;
}

TEST(child_call, the_answer_its_descriptor_and_exit_code_come_back) {
    auto done = call_in_child(answer_with_null, "ready", std::chrono::seconds(10));
    ASSERT_TRUE(done.has_value()) << done.error().describe();
    EXPECT_EQ(done->bytes, "ready");
    EXPECT_EQ(done->exit_code, 7);
    ASSERT_TRUE(done->fd);
    struct stat st {};
    ASSERT_EQ(::fstat(done->fd.get(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(child_call, a_child_past_its_limit_is_killed) {
    const auto start = std::chrono::steady_clock::now();
    auto done = call_in_child(sleep_long, nullptr, std::chrono::milliseconds(300));
    ASSERT_FALSE(done.has_value());
    EXPECT_EQ(done.error().code, error_code::timed_out);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(child_call, the_child_keeps_only_the_descriptors_it_names) {
    int a = ::open("/dev/null", O_RDONLY | O_NOCTTY), b = ::open("/dev/null", O_RDONLY | O_NOCTTY);
    ASSERT_GE(a, 0);
    ASSERT_GE(b, 0);
    auto done = call_in_child(count_descriptors, &b, std::chrono::seconds(10));
    ::close(a);
    ::close(b);
    ASSERT_TRUE(done.has_value());
    EXPECT_EQ(done->bytes, "2");  // its socket and b
}

}  // namespace
}  // namespace heapd
