// Discovery against real JVMs: the caller's own, another user's, one in a container with its own
// /tmp and pid namespace; stale files of dead processes and of pids now used by other processes
// are left out; the JVMs found agree with jps.
#include "attach/jvm_discovery.h"

#include <fcntl.h>

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "attach/process_snapshot.h"

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

// The pid of a process whose command line holds text, other than the caller; 0 when none.
pid_t process_with(const std::string& text) {
    for (const auto& e : fs::directory_iterator("/proc")) {
        const std::string name = e.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream in(e.path() / "cmdline");
        const std::string cmdline((std::istreambuf_iterator<char>(in)), {});
        if (cmdline.find(text) != std::string::npos && std::stoi(name) != ::getpid()) return std::stoi(name);
    }
    return 0;
}

TEST(jvm_discovery, leaves_out_the_jhsdb_this_process_runs_as_a_helper) {
    // jhsdb is a JVM: while it reads another JVM's stacks from outside, it is none of the host's.
    test::demo_jvm jvm({}, {"30"});
    ASSERT_TRUE(jvm.ready());
    char exe[4096] = {};
    ASSERT_GT(::readlink(("/proc/" + std::to_string(jvm.pid()) + "/exe").c_str(), exe, sizeof exe - 1), 0);
    snapshot_target target{jvm.pid(), ::geteuid(), ::getegid(), exe};
    test::scratch_dir dir;
    const int out = ::open(dir.file("stacks").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(out, 0);
    std::optional<result<void>> read;
    std::thread reading([&] { read = java_stacks_from_outside(target, out, std::chrono::seconds(120)); });
    pid_t helper = 0;
    bool seen_as_jvm = false, helper_was_a_jvm = false;
    for (int i = 0; i < 600 && !read.has_value(); ++i) {
        if (helper == 0) helper = process_with("bin/jhsdb");
        if (helper != 0) {
            auto d = discover_jvms();
            ASSERT_TRUE(d) << d.error().message;
            seen_as_jvm = seen_as_jvm || find_pid(*d, helper) != nullptr;
            EXPECT_NE(find_pid(*d, jvm.pid()), nullptr);
            // It is a JVM all the same (its hsperfdata file, or libjvm.so), once it has started.
            auto one = find_jvm(helper);
            helper_was_a_jvm = helper_was_a_jvm || one.has_value();
        }
        ::usleep(50 * 1000);
    }
    reading.join();
    ::close(out);
    ASSERT_TRUE(read.has_value() && read->has_value()) << (read && !*read ? read->error().message : "");
    ASSERT_NE(helper, 0) << "no jhsdb was seen running";
    EXPECT_TRUE(helper_was_a_jvm);
    EXPECT_FALSE(seen_as_jvm) << "heapd's own jhsdb " << helper << " was listed as a JVM of the host";
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
