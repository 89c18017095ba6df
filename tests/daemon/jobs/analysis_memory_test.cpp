// What the analysis may take: in a real memory cgroup made by the test, the cgroup's limit less its
// anonymous memory, whatever the host has free.
#include "daemon/jobs/analysis_memory.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "support/test_cgroup.h"

namespace heapd::daemon {
namespace {

constexpr std::uint64_t mib = 1 << 20;

TEST(analysis_memory, a_cgroup_limit_bounds_what_is_available) {
    test::test_cgroup cgroup("memory");
    if (!cgroup.ok()) GTEST_SKIP() << "no writable cgroup v1 memory hierarchy here";
    ASSERT_TRUE(cgroup.set("memory.limit_in_bytes", std::to_string(300 * mib)));
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0);
    const pid_t child = ::fork();
    if (child == 0) {
        char go = 0;
        if (::read(pipe_fds[0], &go, 1) != 1) ::_exit(1);
        const std::uint64_t available = available_memory();
        ::_exit(::write(pipe_fds[1], &available, sizeof available) == sizeof available ? 0 : 1);
    }
    test::child_reaper reaper(child);  // killed and reaped if the test ends before the child does
    ASSERT_TRUE(cgroup.add(child));
    ASSERT_EQ(::write(pipe_fds[1], "g", 1), 1);
    int status = 0;
    ASSERT_EQ(::waitpid(reaper.release(), &status, 0), child);
    ASSERT_EQ(WEXITSTATUS(status), 0);
    std::uint64_t available = 0;
    ASSERT_EQ(::read(pipe_fds[0], &available, sizeof available), static_cast<ssize_t>(sizeof available));
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    EXPECT_LE(available, 300 * mib);
    EXPECT_GT(available, 200 * mib);  // the child took a few MiB of it
}

}  // namespace
}  // namespace heapd::daemon
