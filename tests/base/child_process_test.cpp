// The one way heapd runs a child: forked or spawned, read until it closes its channel or a bound
// ends the reading (deadline, silence, cancel, the caller), killed past a bound, always reaped.
#include "base/child_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "base/fd_io.h"

namespace heapd {
namespace {

using namespace std::chrono_literals;
using clock = child_limits::clock;

int say_and_exit(int channel, const void* context) {
    write_all(channel, static_cast<const char*>(context));
    return 3;
}

int sleep_long(int, const void*) {
    ::sleep(30);
    return 0;
}

// Writes a byte every 50 ms for a second, then exits.
int chatter(int channel, const void*) {
    for (int i = 0; i < 20; ++i) {
        write_all(channel, ".");
        ::usleep(50'000);
    }
    return 0;
}

int say_once_then_sleep(int channel, const void*) {
    write_all(channel, "hello");
    ::sleep(30);
    return 0;
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

TEST(child_process, a_forked_child_s_bytes_and_exit_status_come_back) {
    auto child = child_process::fork(say_and_exit, "answer");
    ASSERT_TRUE(child.has_value()) << child.error().describe();
    std::string out;
    EXPECT_EQ(child->read_all({}, out, 1024), child_read_end::closed);
    EXPECT_EQ(out, "answer");
    const child_exit e = child->wait();
    EXPECT_EQ(e.code, 3);
    EXPECT_EQ(e.signal, 0);
    EXPECT_EQ(e.status(), 3);
    EXPECT_EQ(e.text(), "exited with status 3");
    EXPECT_EQ(child->wait().code, 3);  // reaped once, the same answer after
}

TEST(child_process, read_all_keeps_at_most_its_bytes) {
    auto child = child_process::fork(say_and_exit, "0123456789");
    ASSERT_TRUE(child.has_value());
    std::string out;
    EXPECT_EQ(child->read_all({}, out, 4), child_read_end::closed);
    EXPECT_EQ(out, "0123");
}

TEST(child_process, a_child_past_its_deadline_is_killed) {
    auto child = child_process::fork(sleep_long, nullptr);
    ASSERT_TRUE(child.has_value());
    child_limits limits;
    limits.deadline = clock::now() + 300ms;
    const auto start = clock::now();
    std::string out;
    EXPECT_EQ(child->read_all(limits, out, 16), child_read_end::deadline);
    EXPECT_LT(clock::now() - start, 5s);
    const child_exit e = child->wait();
    EXPECT_EQ(e.signal, SIGKILL);
    EXPECT_EQ(e.status(), 128 + SIGKILL);
    EXPECT_NE(e.text().find("was killed by signal 9"), std::string::npos) << e.text();
}

TEST(child_process, silence_kills_a_quiet_child_but_not_a_talking_one) {
    auto quiet = child_process::fork(say_once_then_sleep, nullptr);
    ASSERT_TRUE(quiet.has_value());
    child_limits limits;
    limits.silence = 300ms;
    std::string out;
    EXPECT_EQ(quiet->read_all(limits, out, 64), child_read_end::silence);
    EXPECT_EQ(out, "hello");
    EXPECT_EQ(quiet->wait().signal, SIGKILL);

    auto talking = child_process::fork(chatter, nullptr);  // a second of bytes, 50 ms apart
    ASSERT_TRUE(talking.has_value());
    out.clear();
    EXPECT_EQ(talking->read_all(limits, out, 64), child_read_end::closed);
    EXPECT_EQ(out, std::string(20, '.'));
    EXPECT_EQ(talking->wait().status(), 0);
}

TEST(child_process, cancel_and_the_caller_stop_the_reading_and_kill_the_child) {
    auto child = child_process::fork(sleep_long, nullptr);
    ASSERT_TRUE(child.has_value());
    std::atomic<bool> cancel{false};
    std::thread later([&] {
        std::this_thread::sleep_for(200ms);
        cancel = true;
    });
    child_limits limits;
    limits.cancelled = [&] { return cancel.load(); };
    limits.tick = 50ms;
    std::string out;
    EXPECT_EQ(child->read_all(limits, out, 16), child_read_end::cancelled);
    later.join();
    EXPECT_EQ(child->wait().signal, SIGKILL);

    auto chatty = child_process::fork(chatter, nullptr);
    ASSERT_TRUE(chatty.has_value());
    int chunks = 0;
    EXPECT_EQ(chatty->read({}, [&](std::string_view, std::vector<unique_fd>&) { return ++chunks < 2; }),
              child_read_end::stopped);
    EXPECT_EQ(chunks, 2);
    EXPECT_EQ(chatty->wait().signal, SIGKILL);
}

TEST(child_process, a_child_not_waited_for_is_killed_and_reaped_when_it_goes) {
    pid_t pid = -1;
    {
        auto child = child_process::fork(sleep_long, nullptr);
        ASSERT_TRUE(child.has_value());
        pid = child->pid();
        EXPECT_TRUE(alive(pid));
    }
    EXPECT_FALSE(alive(pid));  // neither running nor a zombie: reaped
}

// A program gets /dev/null as input, the channel as output, the caller's descriptors as 3, 4, ...
// and no other, the environment it is given, and a process group of its own when asked.
TEST(child_process, a_spawned_program_gets_its_descriptors_environment_and_group) {
    int p[2];
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
    write_all(p[1], "from the pipe\n");
    ::close(p[1]);
    spawn_spec spec;
    spec.path = "/bin/sh";
    spec.argv = {"sh", "-c",
                 "echo \"$GREETING\"; cat <&3; readlink /proc/$$/fd/0; n=''; "
                 "for i in 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24; do "
                 "[ -e /proc/$$/fd/$i ] && n=\"$n $i\"; done; echo \"beyond 3:$n\"; "
                 "echo $$ $(cut -d' ' -f5 /proc/$$/stat)"};
    spec.env = std::vector<std::string>{"GREETING=hello", "PATH=/usr/bin:/bin"};
    spec.fds = {p[0]};
    spec.own_group = true;
    auto child = child_process::spawn(spec);
    ::close(p[0]);
    ASSERT_TRUE(child.has_value()) << child.error().describe();
    std::string out;
    EXPECT_EQ(child->read_all({}, out, 4096), child_read_end::closed);
    EXPECT_EQ(child->wait().status(), 0);
    std::vector<std::string> lines;
    for (std::size_t at = 0, nl; (nl = out.find('\n', at)) != std::string::npos; at = nl + 1)
        lines.push_back(out.substr(at, nl - at));
    ASSERT_EQ(lines.size(), 5u) << out;
    EXPECT_EQ(lines[0], "hello");
    EXPECT_EQ(lines[1], "from the pipe");  // descriptor 3
    EXPECT_EQ(lines[2], "/dev/null");      // standard input
    EXPECT_EQ(lines[3], "beyond 3:");      // nothing else went along
    const auto space = lines[4].find(' ');
    EXPECT_EQ(lines[4].substr(0, space), lines[4].substr(space + 1));  // its own group: pgid == pid

    spec.path = "/nonexistent/program";
    auto missing = child_process::spawn(spec);
    ASSERT_FALSE(missing.has_value());
    EXPECT_EQ(missing.error().code, error_code::io);
}

}  // namespace
}  // namespace heapd
