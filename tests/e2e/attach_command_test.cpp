// `heapd attach` against real JVMs: its thread dump and class histogram agree with jattach and jcmd
// on the same idle JVM; dumps land on the host, also from a container; every exit status.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "attach/attach_test_util.h"
#include "support/isolated_jvm.h"
#include "support/jvm_process.h"

namespace heapd::test {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

command_result heapd_attach(pid_t pid, std::vector<std::string> args) {
    std::vector<std::string> argv = {heapd_binary(), "attach", std::to_string(pid)};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv);
}

// The names of the threads in a thread dump ("name" #1 ...), leaving out the JIT compiler threads,
// which HotSpot starts and stops as compilation demands.
std::set<std::string> thread_names(const std::string& dump) {
    std::set<std::string> names;
    std::istringstream in(dump);
    for (std::string line; std::getline(in, line);) {
        if (!line.starts_with("\"")) continue;
        std::string name = line.substr(1, line.find('"', 1) - 1);
        if (!contains(name, "CompilerThread")) names.insert(name);
    }
    return names;
}

// The frames of one thread's stack ("\tat ..." and "\t- ..." lines after its header), object
// addresses ("<0x...>") left out.
std::vector<std::string> frames_of(const std::string& dump, const std::string& thread) {
    std::vector<std::string> frames;
    std::istringstream in(dump);
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("\""))
            inside = line.starts_with("\"" + thread + "\"");
        else if (inside && line.starts_with("\t"))
            frames.push_back(line.substr(0, line.find("<0x")));
    }
    return frames;
}

// The rows of a class histogram: "   1:   7208   333016  [B (java.base@17)" with the rank.
std::vector<std::string> histogram_rows(const std::string& text) {
    std::vector<std::string> rows;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        std::size_t colon = line.find(':');
        if (colon == std::string::npos || line.find_first_not_of(' ') == colon || colon + 1 == line.size()) continue;
        if (line.find_first_not_of(" 0123456789") == colon) rows.push_back(line);  // not jcmd's "PID:" line
    }
    return rows;
}

// The rows only one of two histograms has, marked - and +; "" when they are equal.
std::string row_difference(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    std::set<std::string> in_a(a.begin(), a.end()), in_b(b.begin(), b.end());
    std::string out;
    for (const auto& r : a)
        if (!in_b.contains(r)) out += "- " + r + "\n";
    for (const auto& r : b)
        if (!in_a.contains(r)) out += "+ " + r + "\n";
    if (out.empty() && a != b) out = "same rows in another order\n";
    return out;
}

TEST(attach_command, threaddump_matches_jattach_and_jcmd) {
    demo_jvm jvm(java_main{"AttachTarget"}, {"-Xmx64m"}, {});
    ASSERT_TRUE(jvm.ready());
    auto ours = heapd_attach(jvm.pid(), {"threaddump"});
    ASSERT_EQ(ours.exit_code, 0) << ours.err;
    auto jattach = run_command({"jattach", std::to_string(jvm.pid()), "threaddump"});
    ASSERT_EQ(jattach.exit_code, 0) << jattach.err;
    auto jcmd = jvm.jcmd({"Thread.print"});
    ASSERT_EQ(jcmd.exit_code, 0) << jcmd.err;
    auto names = thread_names(ours.out);
    EXPECT_TRUE(names.contains("main"));
    EXPECT_TRUE(names.contains("Attach Listener"));
    EXPECT_EQ(names, thread_names(jattach.out));
    EXPECT_EQ(names, thread_names(jcmd.out));
    auto main_frames = frames_of(ours.out, "main");
    ASSERT_FALSE(main_frames.empty());
    EXPECT_TRUE(
        std::ranges::any_of(main_frames, [](const std::string& f) { return contains(f, "AttachTarget.main"); }));
    EXPECT_EQ(main_frames, frames_of(jattach.out, "main"));
    EXPECT_EQ(main_frames, frames_of(jcmd.out, "main"));
}

TEST(attach_command, inspectheap_matches_jcmd_and_jattach) {
    demo_jvm jvm({"-Xmx128m"});
    ASSERT_TRUE(jvm.ready());
    // A young JVM still changes between full GCs (its Cleaner drops objects the first ones found
    // unreachable, whenever it gets the CPU): the three tools are asked again, in turn, until the
    // JVM holds still between them.
    std::vector<std::string> ours, theirs, jattachs;
    for (int attempt = 0; attempt < 8; ++attempt) {
        auto r = heapd_attach(jvm.pid(), {"inspectheap"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        auto jcmd = jvm.jcmd({"GC.class_histogram"});
        ASSERT_EQ(jcmd.exit_code, 0) << jcmd.err;
        auto jattach = run_command({"jattach", std::to_string(jvm.pid()), "inspectheap"});
        ASSERT_EQ(jattach.exit_code, 0) << jattach.err;
        ours = histogram_rows(r.out);
        theirs = histogram_rows(jcmd.out);
        jattachs = histogram_rows(jattach.out);
        if (ours == theirs && ours == jattachs) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    ASSERT_GT(ours.size(), 100u);
    EXPECT_TRUE(std::ranges::any_of(ours, [](const std::string& r) { return contains(r, "Demo$Session"); }));
    EXPECT_EQ(row_difference(ours, theirs), "");
    EXPECT_EQ(row_difference(ours, jattachs), "");
    auto all = heapd_attach(jvm.pid(), {"inspectheap", "-all"});
    ASSERT_EQ(all.exit_code, 0) << all.err;
    EXPECT_GT(histogram_rows(all.out).size(), 100u);
}

TEST(attach_command, dumpheap_writes_a_host_file) {
    demo_jvm jvm({"-Xmx64m"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    auto r = heapd_attach(jvm.pid(), {"dumpheap", dir.file("d.hprof")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "Heap dump file created")) << r.out;
    EXPECT_TRUE(std::filesystem::is_regular_file(dir.file("d.hprof")));
    auto again = heapd_attach(jvm.pid(), {"dumpheap", dir.file("d.hprof")});
    EXPECT_EQ(again.exit_code, 2);
    EXPECT_TRUE(contains(again.err, "exists")) << again.err;
    auto gz = heapd_attach(jvm.pid(), {"dumpheap", dir.file("d.hprof.gz"), "-all", "6"});
    EXPECT_EQ(gz.exit_code, 0) << gz.err;
    EXPECT_EQ(heapd_attach(jvm.pid(), {"dumpheap", dir.file("e.hprof"), "-some"}).exit_code, 1);
    EXPECT_EQ(heapd_attach(jvm.pid(), {"dumpheap", dir.file("e.hprof"), "-all", "10"}).exit_code, 1);
    auto nowhere = heapd_attach(jvm.pid(), {"dumpheap", dir.file("no-dir/e.hprof")});
    EXPECT_EQ(nowhere.exit_code, 3);
    EXPECT_TRUE(contains(nowhere.out, "No such file or directory")) << nowhere.out;
}

TEST(attach_command, dumpheap_of_a_container_jvm_arrives_on_the_host) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root for namespaces";
    isolated_jvm jvm(java_main{"Demo"}, {"-Xmx64m"}, {"100"}, isolation{nullptr, true, {}});
    ASSERT_TRUE(jvm.ready());
    ASSERT_EQ(jvm.ns_pid(), 1);
    scratch_dir dir;
    auto r = heapd_attach(jvm.pid(), {"dumpheap", dir.file("c.hprof")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "moved to " + dir.file("c.hprof"))) << r.err;
    std::size_t at = r.err.find("/tmp/heapd-dump-1-");
    ASSERT_NE(at, std::string::npos) << r.err;
    std::string staged = r.err.substr(at, r.err.find(' ', at) - at);
    EXPECT_FALSE(std::filesystem::exists("/proc/" + std::to_string(jvm.pid()) + "/root" + staged)) << staged;
    std::ifstream in(dir.file("c.hprof"), std::ios::binary);
    std::string magic(18, '\0');
    in.read(magic.data(), 18);
    EXPECT_EQ(magic, "JAVA PROFILE 1.0.2");
    EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
}

TEST(attach_command, another_users_jvm_is_refused_to_a_non_root_caller) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a user";
    temp_user user;
    ASSERT_TRUE(user.ok());
    demo_jvm jvm({"-Xmx64m"});
    ASSERT_TRUE(jvm.ready());
    stopwatch clock;
    auto r = run_command({"setpriv", "--reuid=" + std::to_string(user.uid()), "--regid=" + std::to_string(user.gid()),
                          "--clear-groups", heapd_binary(), "attach", std::to_string(jvm.pid()), "threaddump"});
    EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
    EXPECT_TRUE(contains(r.err, "permission_denied")) << r.err;
    EXPECT_LT(clock.seconds(), 10 + 5);
    EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
}

TEST(attach_command, a_non_root_caller_attaches_its_own_jvm) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a user";
    temp_user user;
    ASSERT_TRUE(user.ok());
    isolated_jvm jvm(java_main{"AttachTarget"}, {"-Xmx64m"}, {}, isolation{&user, false, {}});
    ASSERT_TRUE(jvm.ready());
    std::vector<std::string> as_user = {"setpriv",
                                        "--reuid=" + std::to_string(user.uid()),
                                        "--regid=" + std::to_string(user.gid()),
                                        "--clear-groups",
                                        heapd_binary(),
                                        "attach",
                                        std::to_string(jvm.pid())};
    auto as = [&](std::vector<std::string> args) {
        std::vector<std::string> argv = as_user;
        argv.insert(argv.end(), args.begin(), args.end());
        return run_command(argv);
    };
    auto r = as({"threaddump"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "AttachTarget.main")) << r.out;
    EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
    // The user can write only in /tmp here: the dump lands there, in place.
    std::string dump = "/tmp/heapd-test-" + std::to_string(jvm.pid()) + ".hprof";
    auto d = as({"dumpheap", dump});
    EXPECT_EQ(d.exit_code, 0) << d.err;
    EXPECT_TRUE(std::filesystem::is_regular_file(dump));
    std::filesystem::remove(dump);
}

TEST(attach_command, exit_statuses) {
    demo_jvm jvm({"-Xmx64m"});
    ASSERT_TRUE(jvm.ready());
    EXPECT_EQ(run_command({heapd_binary(), "attach"}).exit_code, 1);
    EXPECT_EQ(run_command({heapd_binary(), "attach", std::to_string(jvm.pid())}).exit_code, 1);
    EXPECT_EQ(run_command({heapd_binary(), "attach", "twelve", "threaddump"}).exit_code, 1);
    EXPECT_EQ(heapd_attach(jvm.pid(), {"threaddump", "--timeout", "0"}).exit_code, 1);
    auto multi = heapd_attach(jvm.pid(), {"jcmd", "GC.class_histogram", "-all", "--timeout", "20"});
    EXPECT_EQ(multi.exit_code, 0) << multi.err;  // the words form one diagnostic command line
    EXPECT_TRUE(contains(multi.out, "java.lang.String")) << multi.out;
    auto unknown = heapd_attach(jvm.pid(), {"jcmd", "No.Such.Command"});
    EXPECT_EQ(unknown.exit_code, 3);
    EXPECT_TRUE(contains(unknown.out, "Unknown diagnostic command")) << unknown.out;
    EXPECT_EQ(heapd_attach(jvm.pid(), {"printflag", "MaxHeapSize"}).out.substr(0, 17), "-XX:MaxHeapSize=6");

    auto sleeper = run_command({"sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!"});
    pid_t sleep_pid = std::stoi(sleeper.out);
    auto not_jvm = heapd_attach(sleep_pid, {"threaddump"});
    ::kill(sleep_pid, SIGKILL);
    EXPECT_EQ(not_jvm.exit_code, 4);
    EXPECT_TRUE(contains(not_jvm.err, "not_a_jvm")) << not_jvm.err;

    ::kill(jvm.pid(), SIGSTOP);
    auto stopped = heapd_attach(jvm.pid(), {"threaddump", "--timeout", "2"});
    ::kill(jvm.pid(), SIGCONT);
    EXPECT_EQ(stopped.exit_code, 4);
    EXPECT_TRUE(contains(stopped.err, "not_responding")) << stopped.err;
}

}  // namespace
}  // namespace heapd::test
