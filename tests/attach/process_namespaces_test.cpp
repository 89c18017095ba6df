// Pids and mount namespaces across real namespaces made with unshare: a pid named in a container's
// pid namespace (or one nested in it) is found as the host pid it is; a mount namespace is reached
// through a process living in it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "attach/process_namespaces.h"
#include "support/isolated_jvm.h"

namespace heapd::test {
namespace {

// `unshare ARGS sleep 600` run from the test, with its descendants killed on destruction.
class unshared {
public:
    explicit unshared(std::vector<std::string> args) {
        args.insert(args.begin(), "unshare");
        args.insert(args.end(), {"sleep", "600"});
        pid_ = ::fork();
        if (pid_ == 0) {
            std::vector<char*> argv;
            for (auto& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            ::setpgid(0, 0);
            ::execvp("unshare", argv.data());
            ::_exit(127);
        }
    }
    ~unshared() { end(); }
    // Kills it and what it started, and reaps it.
    void end() {
        if (pid_ <= 0) return;
        ::kill(-pid_, SIGKILL);
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }
    unshared(const unshared&) = delete;
    unshared& operator=(const unshared&) = delete;
    pid_t pid() const { return pid_; }

    // The process running sleep (unshare itself, or the last of its forked children): waits up to 10 s.
    pid_t sleeper() const {
        for (int i = 0; i < 1000; ++i) {
            pid_t p = pid_;
            for (pid_t child; (child = first_child(p)) > 0;) p = child;
            std::ifstream comm("/proc/" + std::to_string(p) + "/comm");
            std::string name;
            if (comm >> name && name == "sleep") return p;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return -1;
    }

private:
    static pid_t first_child(pid_t pid) {
        std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
        pid_t child = -1;
        in >> child;
        return in ? child : -1;
    }
    pid_t pid_ = -1;
};

TEST(process_namespaces, a_pid_of_our_own_namespace_is_itself) {
    auto own = attach::own_pid_namespace();
    ASSERT_TRUE(own);
    EXPECT_EQ(own->level, 0);
    auto ours = attach::pid_namespace_of(::getpid());
    ASSERT_TRUE(ours);
    EXPECT_EQ(ours->inode, own->inode);
    EXPECT_EQ(ours->level, 0);
    EXPECT_EQ(attach::pid_from_namespace(12345, *own).value(), 12345);
}

TEST(process_namespaces, a_pid_in_a_container_is_found_on_the_host) {
    unshared box({"--pid", "--fork", "--mount-proc"});
    const pid_t sleeper = box.sleeper();
    ASSERT_GT(sleeper, 0);
    ASSERT_EQ(ns_pids(sleeper).back(), 1);
    auto ns = attach::pid_namespace_of(sleeper);
    ASSERT_TRUE(ns);
    EXPECT_EQ(ns->level, 1);
    EXPECT_EQ(attach::pid_from_namespace(1, *ns).value(), sleeper);
    // Known by inode only (a spooled request): the same process.
    EXPECT_EQ(attach::pid_from_namespace(1, {ns->inode, -1}).value(), sleeper);
    EXPECT_EQ(attach::pid_in_namespace(sleeper, *ns).value(), 1);
    EXPECT_EQ(attach::pid_in_namespace(sleeper, {ns->inode, -1}).value(), 1);
    EXPECT_FALSE(attach::pid_in_namespace(::getpid(), *ns));  // the host's processes are not in it
    // A pid the container does not have.
    auto none = attach::pid_from_namespace(4242, *ns);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code, error_code::no_such_process);
    EXPECT_FALSE(attach::pid_namespace_of(999999999));
}

TEST(process_namespaces, a_pid_in_a_container_nested_in_another_is_found_from_the_outer_one) {
    // unshare (host) → outer namespace: unshare → inner namespace: sleep as its pid 1.
    unshared box({"--pid", "--fork", "unshare", "--pid", "--fork"});
    const pid_t sleeper = box.sleeper();
    ASSERT_GT(sleeper, 0);
    auto ids = ns_pids(sleeper);
    ASSERT_EQ(ids.size(), 3u);  // host, outer, inner
    auto inner = attach::pid_namespace_of(sleeper);
    ASSERT_TRUE(inner);
    EXPECT_EQ(inner->level, 2);
    // The outer namespace is the one of the process that made the inner one.
    std::ifstream stat("/proc/" + std::to_string(sleeper) + "/status");
    pid_t parent = -1;
    for (std::string line; std::getline(stat, line);)
        if (line.starts_with("PPid:")) parent = std::stoi(line.substr(5));
    auto outer = attach::pid_namespace_of(parent);
    ASSERT_TRUE(outer);
    EXPECT_EQ(outer->level, 1);
    EXPECT_NE(outer->inode, inner->inode);
    EXPECT_EQ(attach::pid_from_namespace(ids[1], *outer).value(), sleeper);
    EXPECT_EQ(attach::pid_from_namespace(1, *inner).value(), sleeper);
    EXPECT_EQ(attach::pid_in_namespace(sleeper, *outer).value(), ids[1]);
    EXPECT_EQ(attach::pid_in_namespace(sleeper, *inner).value(), 1);
    EXPECT_FALSE(attach::pid_in_namespace(parent, *inner));  // the outer one's pid 1 is outside the inner
    // Pid 1 of the outer namespace is the unshare that made the inner one, not the sleeper.
    EXPECT_EQ(attach::pid_from_namespace(1, *outer).value(), parent);
}

TEST(process_namespaces, a_mount_namespace_is_reached_through_a_process_in_it) {
    unshared box({"--mount", "--propagation", "private"});
    const pid_t sleeper = box.sleeper();
    ASSERT_GT(sleeper, 0);
    auto own = attach::mount_namespace_of(0);
    auto theirs = attach::mount_namespace_of(sleeper);
    ASSERT_TRUE(own && theirs);
    EXPECT_NE(*own, *theirs);
    EXPECT_EQ(attach::process_in_mount_namespace(*theirs).value(), sleeper);
    auto ours = attach::process_in_mount_namespace(*own);
    ASSERT_TRUE(ours);
    EXPECT_EQ(attach::mount_namespace_of(*ours).value(), *own);
    box.end();
    auto gone = attach::process_in_mount_namespace(*theirs);
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code, error_code::no_such_process);
}

}  // namespace
}  // namespace heapd::test
