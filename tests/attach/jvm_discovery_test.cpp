// Discovery against real JVMs: the caller's own, another user's, one in a container with its own
// /tmp and pid namespace; stale files of dead processes and of pids now used by other processes
// are left out; the JVMs found agree with jps.
#include "attach/jvm_discovery.h"

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "support/isolated_jvm.h"
#include "support/jvm_process.h"

namespace heapd::attach {
namespace {

namespace fs = std::filesystem;

std::string my_user() {
    passwd* pw = ::getpwuid(::geteuid());
    return pw ? pw->pw_name : "root";
}

std::uint64_t my_ns(const char* kind) {
    struct stat st {};
    return ::stat(("/proc/self/ns/" + std::string(kind)).c_str(), &st) == 0 ? st.st_ino : 0;
}

const discovered_jvm* find_pid(const discovery& d, pid_t pid) {
    for (const auto& j : d.jvms)
        if (j.pid == pid) return &j;
    return nullptr;
}

discovery discover() {
    auto d = discover_jvms();
    EXPECT_TRUE(d) << d.error().message;
    return d ? *d : discovery{};
}

// Removes the files and directories a test put under /tmp, whatever happens.
struct remove_on_exit {
    std::vector<fs::path> paths;
    ~remove_on_exit() {
        std::error_code ec;
        for (auto it = paths.rbegin(); it != paths.rend(); ++it) fs::remove(*it, ec);
    }
};

// A pid that no process has: a child that has exited and been reaped.
pid_t dead_pid() {
    pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ::waitpid(child, nullptr, 0);
    return child;
}

TEST(jvm_discovery, finds_a_jvm_of_the_same_user) {
    test::demo_jvm jvm({}, {"10"});
    ASSERT_TRUE(jvm.ready());
    auto d = discover();
    const discovered_jvm* j = find_pid(d, jvm.pid());
    ASSERT_NE(j, nullptr);
    EXPECT_EQ(j->ns_pid, jvm.pid());
    EXPECT_EQ(j->user, my_user());
    EXPECT_EQ(j->uid, ::geteuid());
    EXPECT_FALSE(j->in_container);
    EXPECT_EQ(j->mount_ns, my_ns("mnt"));
    EXPECT_EQ(j->pid_ns, my_ns("pid"));
    EXPECT_EQ(j->perfdata_path, "/tmp/hsperfdata_" + my_user() + "/" + std::to_string(jvm.pid()));
    auto one = find_jvm(jvm.pid());
    ASSERT_TRUE(one) << one.error().message;
    EXPECT_EQ(one->perfdata_path, j->perfdata_path);
    EXPECT_EQ(one->perfdata_ino, j->perfdata_ino);
    auto fd = open_perfdata(*j);
    ASSERT_TRUE(fd) << fd.error().message;
    ::close(*fd);
}

TEST(jvm_discovery, leaves_out_the_jvms_a_process_started_itself_when_asked) {
    // The daemon's own helpers (jhsdb converting a snapshot) are JVMs it must not watch or list.
    test::demo_jvm jvm({}, {"10"});
    ASSERT_TRUE(jvm.ready());
    auto all = discover_jvms();
    ASSERT_TRUE(all) << all.error().message;
    EXPECT_NE(find_pid(*all, jvm.pid()), nullptr);
    auto without = discover_jvms(::getpid());
    ASSERT_TRUE(without) << without.error().message;
    EXPECT_EQ(find_pid(*without, jvm.pid()), nullptr);
    // Those of another process stay.
    auto other = discover_jvms(dead_pid());
    ASSERT_TRUE(other) << other.error().message;
    EXPECT_NE(find_pid(*other, jvm.pid()), nullptr);
}

TEST(jvm_discovery, finds_a_jvm_of_another_user) {
    test::temp_user user;
    ASSERT_TRUE(user.ok());
    test::isolated_jvm jvm(test::java_main{"Demo"}, {}, {"10"}, {&user, false});
    ASSERT_TRUE(jvm.ready());
    auto d = discover();
    const discovered_jvm* j = find_pid(d, jvm.pid());
    ASSERT_NE(j, nullptr);
    EXPECT_EQ(j->user, user.name());
    EXPECT_EQ(j->uid, user.uid());
    EXPECT_FALSE(j->in_container);
    EXPECT_EQ(j->perfdata_path, "/tmp/hsperfdata_" + user.name() + "/" + std::to_string(jvm.pid()));
    struct stat st {};
    ASSERT_EQ(::stat(j->perfdata_path.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, user.uid());
}

TEST(jvm_discovery, finds_a_jvm_in_a_container_by_its_host_pid) {
    test::isolated_jvm jvm(test::java_main{"Demo"}, {}, {"10"}, {nullptr, true});
    ASSERT_TRUE(jvm.ready());
    ASSERT_EQ(jvm.ns_pid(), 1);
    // Its file is in the container's own /tmp, not in the host's.
    EXPECT_FALSE(fs::exists("/tmp/hsperfdata_" + my_user() + "/1"));
    auto d = discover();
    const discovered_jvm* j = find_pid(d, jvm.pid());
    ASSERT_NE(j, nullptr);
    EXPECT_EQ(j->ns_pid, 1);
    EXPECT_TRUE(j->in_container);
    EXPECT_NE(j->mount_ns, my_ns("mnt"));
    EXPECT_NE(j->pid_ns, my_ns("pid"));
    EXPECT_EQ(j->perfdata_path, "/proc/" + std::to_string(jvm.pid()) + "/root/tmp/hsperfdata_" + my_user() + "/1");
    EXPECT_EQ(find_pid(d, 1), nullptr);  // never confused with the host's pid 1
    std::size_t listed = 0;
    for (const auto& x : d.jvms) listed += x.pid == jvm.pid();
    EXPECT_EQ(listed, 1u);
    auto one = find_jvm(jvm.pid());
    ASSERT_TRUE(one) << one.error().message;
    EXPECT_EQ(one->ns_pid, 1);
    EXPECT_TRUE(one->in_container);
    auto fd = open_perfdata(*j);
    ASSERT_TRUE(fd) << fd.error().message;
    ::close(*fd);
}

TEST(jvm_discovery, finds_a_jvm_of_another_user_in_a_container) {
    test::temp_user user;
    ASSERT_TRUE(user.ok());
    test::isolated_jvm jvm(test::java_main{"Demo"}, {}, {"10"}, {&user, true});
    ASSERT_TRUE(jvm.ready());
    auto d = discover();
    const discovered_jvm* j = find_pid(d, jvm.pid());
    ASSERT_NE(j, nullptr);
    EXPECT_EQ(j->ns_pid, 1);
    EXPECT_EQ(j->uid, user.uid());
    EXPECT_EQ(j->user, user.name());
    EXPECT_TRUE(j->in_container);
}

TEST(jvm_discovery, leaves_out_stale_files_and_reused_pids) {
    test::demo_jvm jvm({}, {"10"});
    ASSERT_TRUE(jvm.ready());
    const std::string dir = "/tmp/hsperfdata_" + my_user();
    const std::string real = dir + "/" + std::to_string(jvm.pid());
    remove_on_exit cleanup;
    // A copy of a real file under a pid that no process has (a JVM killed with SIGKILL leaves one).
    const std::string dead = dir + "/" + std::to_string(dead_pid());
    ASSERT_TRUE(fs::copy_file(real, dead));
    cleanup.paths.push_back(dead);
    // One under the pid of a live process that is no JVM: this test.
    const std::string reused = dir + "/" + std::to_string(::getpid());
    ASSERT_TRUE(fs::copy_file(real, reused));
    cleanup.paths.push_back(reused);
    // One under the live JVM's pid, in another user's directory: the JVM maps only its own.
    const std::string other_dir = "/tmp/hsperfdata_heapdstale" + std::to_string(::getpid());
    ASSERT_TRUE(fs::create_directory(other_dir));
    cleanup.paths.push_back(other_dir);
    ASSERT_TRUE(fs::copy_file(real, other_dir + "/" + std::to_string(jvm.pid())));
    cleanup.paths.push_back(other_dir + "/" + std::to_string(jvm.pid()));

    auto d = discover();
    EXPECT_EQ(find_pid(d, ::getpid()), nullptr);
    for (const auto& j : d.jvms) EXPECT_NE(j.perfdata_path, dead);
    const discovered_jvm* j = find_pid(d, jvm.pid());
    ASSERT_NE(j, nullptr);
    EXPECT_EQ(j->perfdata_path, real);
    std::size_t listed = 0;
    for (const auto& x : d.jvms) listed += x.pid == jvm.pid();
    EXPECT_EQ(listed, 1u);
    auto self = find_jvm(::getpid());
    ASSERT_FALSE(self);
    EXPECT_EQ(self.error().code, error_code::not_a_jvm);
    auto gone = find_jvm(dead_pid());
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code, error_code::no_such_process);
}

TEST(jvm_discovery, leaves_out_a_jvm_killed_with_sigkill) {
    test::demo_jvm jvm({}, {"10"});
    ASSERT_TRUE(jvm.ready());
    const std::string file = "/tmp/hsperfdata_" + my_user() + "/" + std::to_string(jvm.pid());
    remove_on_exit cleanup{{file}};
    ASSERT_NE(find_pid(discover(), jvm.pid()), nullptr);
    ASSERT_EQ(::kill(jvm.pid(), SIGKILL), 0);
    // Dead but not yet reaped (the guard reaps it): a zombie keeps its pid and has no mappings.
    for (int i = 0;
         i < 100 && fs::exists("/proc/" + std::to_string(jvm.pid()) + "/maps") &&
         test::run_command({"grep", "-q", "hsperfdata", "/proc/" + std::to_string(jvm.pid()) + "/maps"}).exit_code == 0;
         ++i)
        ::usleep(50000);
    EXPECT_TRUE(fs::exists(file));  // the JVM had no chance to remove it
    EXPECT_EQ(find_pid(discover(), jvm.pid()), nullptr);
    auto one = find_jvm(jvm.pid());
    EXPECT_FALSE(one);
}

// `jps -l`: pid and main class (or jar) of every JVM it finds (JDK 17's also under /proc/PID/root/tmp).
std::map<pid_t, std::string> jps() {
    auto r = test::run_command({"jps", "-l"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<pid_t, std::string> out;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
        std::istringstream f(line);
        pid_t pid = 0;
        std::string main;
        if (f >> pid) {
            std::getline(f >> std::ws, main);
            if (main != "jdk.jcmd/sun.tools.jps.Jps") out[pid] = main;
        }
    }
    return out;
}

TEST(jvm_discovery, agrees_with_jps) {
    test::demo_jvm a({}, {"10"});
    test::temp_user user;
    ASSERT_TRUE(user.ok());
    test::isolated_jvm b(test::java_main{"Demo"}, {}, {"10"}, {&user, false});
    test::isolated_jvm c(test::java_main{"Demo"}, {}, {"10"}, {nullptr, true});
    ASSERT_TRUE(a.ready() && b.ready() && c.ready());
    auto before = discover();
    auto theirs = jps();
    auto after = discover();
    // Other JVMs on the machine may come and go: compare those present throughout. One that other
    // tests start meanwhile may be listed by jps before its hsperfdata is complete enough for heapd:
    // it is looked for again for up to 5 s.
    for (const auto& [pid, main] : theirs) {
        bool found = find_pid(before, pid) || find_pid(after, pid);
        for (int i = 0; i < 50 && !found && fs::exists("/proc/" + std::to_string(pid)); ++i) {
            ::usleep(100000);
            found = find_pid(discover(), pid);
        }
        EXPECT_TRUE(found || !fs::exists("/proc/" + std::to_string(pid)))
            << "jps lists " << pid << " " << main << ", heapd does not";
    }
    for (const auto& j : before.jvms) {
        if (!find_pid(after, j.pid)) continue;
        EXPECT_TRUE(theirs.contains(j.pid)) << "heapd finds " << j.pid << ", jps does not";
    }
    EXPECT_TRUE(theirs.contains(a.pid()));
    EXPECT_TRUE(theirs.contains(b.pid()));
    EXPECT_TRUE(theirs.contains(c.pid()));  // JDK 17's jps looks into containers too
    EXPECT_NE(find_pid(after, c.pid()), nullptr);
}

}  // namespace
}  // namespace heapd::attach
