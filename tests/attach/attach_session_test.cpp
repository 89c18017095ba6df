// Every fault of an attach session against real processes: each gives its error code within a
// bounded time, never signals a process that is not a JVM, and leaves no trigger file behind.
#include <gtest/gtest.h>

#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "attach/attach_client.h"
#include "attach/attach_test_util.h"
#include "attach/process_info.h"
#include "support/isolated_jvm.h"
#include "support/jvm_process.h"

namespace heapd::test {
namespace {

using attach::attach_options;
using namespace std::chrono_literals;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

attach_options with_timeout(std::chrono::milliseconds timeout) {
    attach_options options;
    options.timeout = timeout;
    return options;
}

// A forked process of the test, killed and reaped on destruction.
struct forked {
    pid_t pid = -1;
    explicit forked(pid_t p) : pid(p) {}
    ~forked() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    }
};

TEST(attach_session, a_dead_pid_or_a_zombie) {
    pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    // Not reaped yet: a zombie.
    while (attach::read_process_info(child) && attach::read_process_info(child)->state != 'Z')
        std::this_thread::sleep_for(10ms);
    auto zombie = attach::thread_dump(child);
    ASSERT_FALSE(zombie);
    EXPECT_EQ(zombie.error().code, error_code::no_such_process) << zombie.error().message;
    ::waitpid(child, nullptr, 0);
    stopwatch clock;
    auto dead = attach::thread_dump(child);
    ASSERT_FALSE(dead);
    EXPECT_EQ(dead.error().code, error_code::no_such_process);
    EXPECT_LT(clock.seconds(), 5);
}

TEST(attach_session, a_process_that_is_no_jvm_is_never_signalled) {
    // Even one that handles SIGQUIT: it writes to the pipe when it gets one.
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    forked quitter(::fork());
    if (quitter.pid == 0) {
        static int out = fds[1];
        struct sigaction sa {};
        sa.sa_handler = [](int) { (void)!::write(out, "Q", 1); };
        ::sigaction(SIGQUIT, &sa, nullptr);
        (void)!::write(out, "R", 1);
        for (;;) ::pause();
    }
    ::close(fds[1]);
    char c = 0;
    ASSERT_EQ(::read(fds[0], &c, 1), 1);
    ASSERT_EQ(c, 'R');
    auto r = attach::thread_dump(quitter.pid);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, error_code::not_a_jvm) << r.error().message;
    ::kill(quitter.pid, SIGKILL);
    ::waitpid(quitter.pid, nullptr, 0);
    quitter.pid = -1;
    EXPECT_EQ(::read(fds[0], &c, 1), 0);  // closed without a 'Q': no SIGQUIT reached it
    ::close(fds[0]);

    forked sleeper(::fork());
    if (sleeper.pid == 0) {
        ::execlp("sleep", "sleep", "60", nullptr);
        ::_exit(127);
    }
    std::this_thread::sleep_for(100ms);
    auto s = attach::thread_dump(sleeper.pid);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, error_code::not_a_jvm) << s.error().message;
    EXPECT_EQ(::waitpid(sleeper.pid, nullptr, WNOHANG), 0);  // alive
    EXPECT_EQ(trigger_files(sleeper.pid), std::vector<std::string>{});
}

TEST(attach_session, a_reused_pid_is_recognised_by_its_start_time) {
    demo_jvm jvm({"-Xmx64m"});
    ASSERT_TRUE(jvm.ready());
    auto info = attach::read_process_info(jvm.pid());
    ASSERT_TRUE(info);
    attach_options options;
    options.expected_start_time = info->start_time + 1;  // what another process of that pid would show
    auto reused = attach::thread_dump(jvm.pid(), options);
    ASSERT_FALSE(reused);
    EXPECT_EQ(reused.error().code, error_code::no_such_process);
    EXPECT_TRUE(contains(reused.error().message, "reused")) << reused.error().message;
    options.expected_start_time = info->start_time;
    auto same = attach::thread_dump(jvm.pid(), options);
    ASSERT_TRUE(same) << same.error().message;
    EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
}

TEST(attach_session, disabled_attach_is_reported_at_once) {
    for (auto flags : {std::vector<std::string>{"-XX:+DisableAttachMechanism"},
                       std::vector<std::string>{"-XX:+DisableAttachMechanism", "-XX:-UsePerfData"}}) {
        demo_jvm jvm({"-Xmx64m", flags[0], flags.size() > 1 ? flags[1] : "-Xss1m"});
        ASSERT_TRUE(jvm.ready());
        stopwatch clock;
        auto r = attach::thread_dump(jvm.pid());
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code, error_code::attach_disabled) << r.error().message;
        EXPECT_LT(clock.seconds(), 5);  // from hsperfdata or the command line, not after the 10 s timeout
        EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
    }
}

TEST(attach_session, attach_works_without_perfdata) {
    demo_jvm jvm({"-Xmx64m", "-XX:-UsePerfData"});
    ASSERT_TRUE(jvm.ready());
    EXPECT_FALSE(std::filesystem::exists("/tmp/hsperfdata_root/" + std::to_string(jvm.pid())));
    auto r = attach::thread_dump(jvm.pid());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE(contains(r->output, "Full thread dump"));
    EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
}

TEST(attach_session, a_stopped_jvm_is_not_responding_until_continued) {
    demo_jvm jvm({"-Xmx64m"});
    ASSERT_TRUE(jvm.ready());
    for (bool listener_running : {false, true}) {
        if (listener_running) {
            ASSERT_TRUE(attach::thread_dump(jvm.pid()));
        }
        ::kill(jvm.pid(), SIGSTOP);
        for (int i = 0; i < 500; ++i) {
            auto info = attach::read_process_info(jvm.pid());
            if (!info || info->stopped()) break;
            std::this_thread::sleep_for(10ms);
        }
        stopwatch clock;
        auto r = attach::thread_dump(jvm.pid(), with_timeout(3s));
        ::kill(jvm.pid(), SIGCONT);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code, error_code::not_responding) << r.error().message;
        EXPECT_TRUE(contains(r.error().message, "stopped")) << r.error().message;
        EXPECT_LT(clock.seconds(), 3 + 5);
        EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
        auto after = attach::thread_dump(jvm.pid());
        ASSERT_TRUE(after) << after.error().message;
    }
}

// While -XX:OnOutOfMemoryError runs the JVM sits at a safepoint: it answers nothing, whether its
// listener must still be started or is running already.
TEST(attach_session, a_jvm_in_its_oom_hook_is_not_responding) {
    for (bool listener_running : {false, true}) {
        scratch_dir dir;
        demo_jvm jvm(java_main{"AttachTarget"}, {"-Xmx32m", "-XX:OnOutOfMemoryError=sleep 120"},
                     {"oom", dir.file("go")});
        ASSERT_TRUE(jvm.ready());
        if (listener_running) {
            ASSERT_TRUE(attach::thread_dump(jvm.pid()));
        }
        std::ofstream(dir.file("go")) << "go";
        for (int i = 0; i < 3000 && children_of(jvm.pid()).empty(); ++i) std::this_thread::sleep_for(10ms);
        ASSERT_FALSE(children_of(jvm.pid()).empty()) << "the OOM hook did not start";
        stopwatch clock;
        auto r = attach::thread_dump(jvm.pid(), with_timeout(2s));
        const double took = clock.seconds();
        EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
        kill_descendants(jvm.pid());  // end the hook: the JVM goes on
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code, error_code::not_responding) << r.error().message;
        EXPECT_TRUE(contains(r.error().message, "safepoint")) << r.error().message;
        EXPECT_LT(took, 2 + 5);
        auto after = attach::thread_dump(jvm.pid(), with_timeout(20s));
        ASSERT_TRUE(after) << after.error().message;
        EXPECT_TRUE(contains(after->output, "Full thread dump"));
    }
}

TEST(attach_session, a_deleted_socket_is_made_again) {
    demo_jvm jvm({"-Xmx64m"});
    ASSERT_TRUE(jvm.ready());
    ASSERT_TRUE(attach::thread_dump(jvm.pid()));
    std::string socket = "/tmp/.java_pid" + std::to_string(jvm.pid());
    ASSERT_TRUE(std::filesystem::exists(socket));
    std::filesystem::remove(socket);
    auto r = attach::thread_dump(jvm.pid());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE(contains(r->output, "Full thread dump"));
    EXPECT_TRUE(std::filesystem::exists(socket));
    EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
}

// A socket file nothing listens on, at path: what a JVM that was killed leaves behind. Made over
// whatever was there (the JVM has not been attached to: nothing of that name is its own); removed at
// the end unless replaced meanwhile.
class dead_socket {
public:
    explicit dead_socket(std::string path, uid_t owner = 0, gid_t group = 0) : path_(std::move(path)) {
        ::unlink(path_.c_str());
        int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
        struct stat st {};
        made_ = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                ::lchown(path_.c_str(), owner, group) == 0 && ::lstat(path_.c_str(), &st) == 0;
        inode_ = st.st_ino;
        if (fd >= 0) ::close(fd);
    }
    ~dead_socket() {
        struct stat st {};
        if (made_ && ::lstat(path_.c_str(), &st) == 0 && st.st_ino == inode_) ::unlink(path_.c_str());
    }
    bool made() const { return made_; }

private:
    std::string path_;
    bool made_ = false;
    ino_t inode_ = 0;
};

// A JVM killed (by the kernel's OOM killer, say) leaves its socket; the next process of that pid in
// a /tmp that outlived it (a container's volume) finds it there before it has a listener of its own.
TEST(attach_session, a_socket_left_by_an_earlier_process_of_the_pid_is_replaced) {
    demo_jvm jvm({"-Xmx64m"});
    ASSERT_TRUE(jvm.ready());
    const std::string socket = "/tmp/.java_pid" + std::to_string(jvm.pid());
    dead_socket left(socket);
    ASSERT_TRUE(left.made());
    stopwatch clock;
    auto r = attach::thread_dump(jvm.pid());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE(contains(r->output, "Full thread dump"));
    EXPECT_LT(clock.seconds(), 10);
    EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
    auto again = attach::thread_dump(jvm.pid());  // the JVM's own socket now
    ASSERT_TRUE(again) << again.error().message;
}

// The same in a container, the JVM (pid 1 there) run by a user: the socket is that user's, in the
// container's /tmp, and replaced with that user's rights.
TEST(attach_session, a_stale_socket_in_a_container_is_replaced_with_the_jvm_owners_rights) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a user and a container";
    temp_user user;
    ASSERT_TRUE(user.ok());
    isolated_jvm jvm(java_main{"AttachTarget"}, {"-Xmx64m"}, {}, isolation{&user, true});
    ASSERT_TRUE(jvm.ready());
    ASSERT_EQ(jvm.ns_pid(), 1);
    const std::string socket = "/proc/" + std::to_string(jvm.pid()) + "/root/tmp/.java_pid1";
    dead_socket left(socket, user.uid(), user.gid());
    ASSERT_TRUE(left.made());
    auto r = attach::thread_dump(jvm.pid());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE(contains(r->output, "Full thread dump"));
    struct stat st {};
    ASSERT_EQ(::lstat(socket.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, user.uid());  // the JVM's own listener
    EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
}

// With -Xrs the JVM has no SIGQUIT handler: a stale socket is no reason to signal it (that would
// kill it); the error says why it cannot be attached to.
TEST(attach_session, a_stale_socket_of_a_jvm_without_a_sigquit_handler_signals_nothing) {
    demo_jvm jvm({"-Xmx64m", "-Xrs"});
    ASSERT_TRUE(jvm.ready());
    const std::string socket = "/tmp/.java_pid" + std::to_string(jvm.pid());
    dead_socket left(socket);
    ASSERT_TRUE(left.made());
    auto r = attach::thread_dump(jvm.pid(), with_timeout(3s));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, error_code::attach_disabled) << r.error().message;
    EXPECT_TRUE(contains(r.error().message, "nothing listens")) << r.error().message;
    EXPECT_EQ(::kill(jvm.pid(), 0), 0);
    EXPECT_TRUE(attach::read_process_info(jvm.pid()).has_value());
    EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
}

TEST(attach_session, another_users_jvm_is_refused_to_a_non_root_caller) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a user";
    temp_user user;
    ASSERT_TRUE(user.ok());
    demo_jvm jvm({"-Xmx64m"});  // root's
    ASSERT_TRUE(jvm.ready());
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    forked caller(::fork());
    if (caller.pid == 0) {
        char code = 'x';
        if (::setgroups(0, nullptr) == 0 && ::setresgid(user.gid(), user.gid(), user.gid()) == 0 &&
            ::setresuid(user.uid(), user.uid(), user.uid()) == 0) {
            auto r = attach::thread_dump(jvm.pid());
            code = r ? 'o' : static_cast<char>('0' + static_cast<int>(r.error().code));
        }
        (void)!::write(fds[1], &code, 1);
        ::_exit(0);
    }
    ::close(fds[1]);
    char code = 0;
    ASSERT_EQ(::read(fds[0], &code, 1), 1);
    ::close(fds[0]);
    EXPECT_EQ(code, '0' + static_cast<int>(error_code::permission_denied));
    EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
}

}  // namespace
}  // namespace heapd::test
