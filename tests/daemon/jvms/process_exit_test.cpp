// How a process that is not heapd's child ended, through a pidfd held while it ran: a child of this
// test stands in for it (the test reaps it or not, as a JVM's parent would).
#include "daemon/jvms/process_exit.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <thread>

#include "attach/process_info.h"
#include "support/test_cgroup.h"

namespace heapd::daemon {
namespace {

// A child that waits for a byte on a pipe, then exits with code (or raises signal when code < 0).
struct waiting_child {
    pid_t pid = -1;
    int go = -1;
    explicit waiting_child(int code) {
        int p[2];
        if (::pipe(p) != 0) return;
        pid = ::fork();
        if (pid == 0) {
            ::close(p[1]);
            char c;
            [[maybe_unused]] auto r = ::read(p[0], &c, 1);
            if (code < 0) ::raise(-code);
            ::_exit(code);
        }
        ::close(p[0]);
        go = p[1];
    }
    void release() const {
        [[maybe_unused]] auto w = ::write(go, "x", 1);
        ::close(go);
    }
};

std::uint64_t start_time_of(pid_t pid) {
    auto info = attach::read_process_info(pid);
    return info ? info->start_time : 0;
}

bool wait_exited(const process_watch& w) {
    for (int i = 0; i < 500 && !w.exited(); ++i) ::usleep(10'000);
    return w.exited();
}

TEST(process_exit, a_wait_status_reads_as_exit_code_or_signal) {
    EXPECT_EQ(exit_status_of(3 << 8, "x").code, 3);
    const exit_status killed = exit_status_of(SIGKILL, "x");
    EXPECT_TRUE(killed.known);
    EXPECT_EQ(killed.signal, SIGKILL);
    EXPECT_FALSE(killed.core_dumped);
    EXPECT_TRUE(exit_status_of(SIGSEGV | 0x80, "x").core_dumped);
}

TEST(process_exit, a_zombie_gives_its_status_until_reaped_and_the_pidfd_after) {
    waiting_child child(-SIGKILL);
    ASSERT_GT(child.pid, 0);
    test::child_reaper reaper(child.pid);
    auto watch = process_watch::open(child.pid, start_time_of(child.pid));
    ASSERT_TRUE(watch) << watch.error().message;
    EXPECT_FALSE(watch->exited());
    child.release();
    ASSERT_TRUE(wait_exited(*watch));
    // Not reaped yet: the zombie's /proc/PID/stat has it.
    const exit_status zombie = watch->status();
    EXPECT_TRUE(zombie.known);
    EXPECT_EQ(zombie.signal, SIGKILL);
    EXPECT_EQ(zombie.source, "zombie");  // the pidfd has it only once the process is reaped
    int status = 0;
    ASSERT_EQ(::waitpid(reaper.release(), &status, 0), child.pid);
    // Reaped: only the pidfd can tell (Linux 6.15 and later).
    const exit_status after = watch->status();
    if (!after.known) GTEST_SKIP() << "this kernel keeps no exit status for a pidfd (PIDFD_INFO_EXIT, Linux 6.15)";
    EXPECT_EQ(after.source, "pidfd");
    EXPECT_EQ(after.signal, SIGKILL);
}

TEST(process_exit, an_exit_code_is_read_after_the_parent_reaped_it) {
    waiting_child child(3);
    ASSERT_GT(child.pid, 0);
    test::child_reaper reaper(child.pid);
    auto watch = process_watch::open(child.pid, start_time_of(child.pid));
    ASSERT_TRUE(watch) << watch.error().message;
    child.release();
    int status = 0;
    ASSERT_EQ(::waitpid(reaper.release(), &status, 0), child.pid);
    ASSERT_TRUE(wait_exited(*watch));
    const exit_status s = watch->status();
    if (!s.known) GTEST_SKIP() << "this kernel keeps no exit status for a pidfd (PIDFD_INFO_EXIT, Linux 6.15)";
    EXPECT_EQ(s.signal, 0);
    EXPECT_EQ(s.code, 3);
}

// The death watcher reads a zombie's status while its parent may reap it at any moment: a read that
// fails because the process went in between (ESRCH) is no status, never an exception. Raced many
// times, so that some reads fall between the open and the reap.
TEST(process_exit, a_process_reaped_while_its_status_is_read_gives_no_status_and_no_error) {
    int statuses = 0, reads = 0;
    for (int round = 0; round < 200; ++round) {
        waiting_child child(7);
        ASSERT_GT(child.pid, 0);
        const std::uint64_t start = start_time_of(child.pid);
        std::atomic<bool> reaped{false};
        std::thread reader([&] {
            while (!reaped) {
                ++reads;
                if (auto s = attach::zombie_wait_status(child.pid, start)) {
                    EXPECT_EQ(*s, 7 << 8);
                    ++statuses;
                }
            }
        });
        child.release();
        int status = 0;
        ::usleep(static_cast<useconds_t>(round % 20) * 50);  // reaped at a different moment each round
        EXPECT_EQ(::waitpid(child.pid, &status, 0), child.pid);
        reaped = true;
        reader.join();
    }
    EXPECT_GT(reads, 200);
    std::printf("%d reads, %d of them of the zombie's status\n", reads, statuses);
}

TEST(process_exit, a_pid_that_names_another_process_is_not_watched) {
    waiting_child child(0);
    ASSERT_GT(child.pid, 0);
    test::child_reaper reaper(child.pid);
    auto wrong = process_watch::open(child.pid, start_time_of(child.pid) + 1);
    ASSERT_FALSE(wrong);
    EXPECT_EQ(wrong.error().code, error_code::no_such_process);
    child.release();
    int status = 0;
    ASSERT_EQ(::waitpid(reaper.release(), &status, 0), child.pid);
    auto gone = process_watch::open(child.pid, 1);
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code, error_code::no_such_process);
}

}  // namespace
}  // namespace heapd::daemon
