// Dumps written by the serviceability agent (jhsdb jmap --binaryheap, the way to dump a JVM whose
// attach listener cannot answer) of a real JVM: they mark no class as a GC root, and the report must
// still name the leak's class and static field, as for a dump HotSpot writes itself. And the
// daemon's dump of a JVM that cannot answer attach: a snapshot from outside stands in.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

TEST(sa_dump, the_leak_is_named_by_its_class_and_static_field) {
    // Attach is off: only the serviceability agent can dump this JVM.
    demo_jvm jvm(java_main{"Sessions"}, {"-Xmx256m", "-XX:+DisableAttachMechanism"}, {"20000"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    const std::string file = dir.file("sa.hprof");
    auto sa = run_command({"jhsdb", "jmap", "--binaryheap", "--dumpfile", file, "--pid", std::to_string(jvm.pid())});
    ASSERT_EQ(sa.exit_code, 0) << sa.out << sa.err;

    auto json = run_command({heapd_binary(), "analyze", "--json", "--no-index", file});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const nlohmann::json report = nlohmann::json::parse(json.out);
    const nlohmann::json& summary = report.at("summary");
    EXPECT_EQ(summary.at("writer"), "serviceability agent");
    EXPECT_FALSE(summary.at("gc_roots").contains("sticky_class")) << summary.at("gc_roots");
    EXPECT_GT(summary.at("class_roots_inferred").get<std::uint64_t>(), 100u);

    auto text = run_command({heapd_binary(), "analyze", "--no-index", file});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    // The first suspect is the list the static field holds, not the application class loader.
    const auto suspects = text.out.find("Leak suspects");
    ASSERT_NE(suspects, std::string::npos) << text.out;
    const std::string first = text.out.substr(
        suspects, std::min(text.out.find("\n  2. ", suspects), text.out.find("\nReachability")) - suspects);
    EXPECT_NE(first.find("retained by one java.util.ArrayList"), std::string::npos) << first;
    EXPECT_NE(first.find("20,000 Sessions$Session"), std::string::npos) << first;
    EXPECT_NE(first.find("path: (sticky_class root) class Sessions (static LEAK)"), std::string::npos) << first;
    EXPECT_EQ(first.find("AppClassLoader"), std::string::npos) << first;
}

// heapctl dump of the Sessions JVM pid, which takes no attach: the report names the leak, the stored
// dump says it was taken from outside because attach failed, and the JVM goes on.
void expect_dumped_from_outside(const serve_process& d, pid_t pid) {
    auto dumped = run_heapctl(d, {"dump", std::to_string(pid), "--wait"});
    ASSERT_EQ(dumped.exit_code, 0) << dumped.err << d.log();
    EXPECT_NE(dumped.out.find("path: (sticky_class root) class Sessions (static LEAK)"), std::string::npos)
        << dumped.out;
    const auto dumps = nlohmann::json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(dumps.size(), 1u);
    const std::string file = dumps[0].value("file", "");
    EXPECT_NE(file.find("attach failed: "), std::string::npos) << dumps[0];
    EXPECT_NE(file.find("core by gdb, HPROF by jhsdb"), std::string::npos) << dumps[0];
    EXPECT_EQ(dumps[0]["pid"], pid);
    EXPECT_EQ(::kill(pid, 0), 0);
}

TEST(sa_dump, the_daemon_dumps_a_jvm_with_attach_disabled_from_outside_and_reports_the_leak) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    demo_jvm jvm(java_main{"Sessions"}, {"-Xmx256m", "-XX:+DisableAttachMechanism"}, {"20000"});
    ASSERT_TRUE(jvm.ready());
    expect_dumped_from_outside(d, jvm.pid());
}

// The same for a JVM in a container, run as another user from a JDK only the container has: gdb
// (the host's) takes the core, and the container's jhsdb, in its mount namespace, converts it.
TEST(sa_dump, the_daemon_dumps_a_container_jvm_that_takes_no_attach_with_the_jdk_in_the_container) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    temp_user user;
    ASSERT_TRUE(user.ok());
    isolation how{&user, true};
    how.own_jdk = true;
    isolated_jvm jvm(java_main{"Sessions"}, {"-Xmx256m", "-XX:+DisableAttachMechanism"}, {"20000"}, how);
    ASSERT_TRUE(jvm.ready());
    ASSERT_FALSE(std::filesystem::exists("/tmp/jdk/bin/jhsdb"));  // not on the host
    expect_dumped_from_outside(d, jvm.pid());
}

// The whole of a file of /proc, "" when its process has gone meanwhile.
std::string proc_text(const std::filesystem::path& path) {
    try {
        std::ifstream in(path);
        return std::string((std::istreambuf_iterator<char>(in)), {});
    } catch (const std::exception&) {
        return {};
    }
}

// The pids of the processes whose parent is pid and whose command line has word.
std::vector<pid_t> children_running(pid_t pid, const std::string& word) {
    std::vector<pid_t> out;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        const std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        const std::string text = proc_text(e.path() / "stat");
        const auto close = text.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(text.substr(close + 2));
        char state = 0;
        pid_t parent = 0;
        rest >> state >> parent;
        const std::string cmdline = proc_text(e.path() / "cmdline");
        if (parent == pid && state != 'Z' && cmdline.find(word) != std::string::npos)
            out.push_back(static_cast<pid_t>(std::stoi(name)));
    }
    return out;
}

// Whether none of pids runs (gone, or a zombie) within limit.
bool all_gone(const std::vector<pid_t>& pids, std::chrono::milliseconds limit) {
    for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
        bool running = false;
        for (pid_t p : pids) {
            const std::string text = proc_text("/proc/" + std::to_string(p) + "/stat");
            const auto close = text.rfind(')');
            running = running || (close != std::string::npos && text.substr(close + 2, 1) != "Z");
        }
        if (!running) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

// A dump of a JVM that takes no attach, whose snapshot's conversion (jhsdb) is under way: the
// daemon d, the job's id and jhsdb's pid. The JVM's heap holds 400,000 sessions: jhsdb takes tens
// of seconds over it (measured: see the tests below).
struct converting {
    std::uint64_t job = 0;
    pid_t jhsdb = 0;
};

converting start_conversion(const serve_process& d, pid_t jvm) {
    converting c;
    raw_client client(d.socket());
    if (!client.send_request({1, "dump", {{"pid", jvm}}})) return c;
    auto queued = client.read_reply();
    if (!queued || queued->kind != wire::reply_kind::result) return c;
    c.job = queued->result["job"]["id"].get<std::uint64_t>();
    for (int i = 0; i < 6000 && c.jhsdb == 0; ++i) {
        auto found = children_running(d.pid(), "--binaryheap");
        if (!found.empty())
            c.jhsdb = found.front();
        else
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return c;
}

// A daemon, a JVM that takes no attach with 400,000 sessions, and the conversion of its snapshot
// under way.
struct conversion_scene {
    serve_process d;
    demo_jvm jvm{java_main{"Sessions"}, {"-Xmx1g", "-XX:+DisableAttachMechanism"}, {"400000"}};
    converting c;

    // Empty when the conversion runs, else what went wrong.
    std::string set() {
        if (!d.ready() || !jvm.ready()) return "no daemon or no JVM: " + d.log();
        c = start_conversion(d, jvm.pid());
        return c.jhsdb != 0 ? "" : "no conversion started: " + d.log();
    }
};

// heapctl cancel during the conversion: jhsdb (and its process group) is killed within the
// cancel's check (0.2 s), the job ends cancelled, and the JVM goes on.
TEST(sa_dump, a_cancelled_conversion_ends_at_once_with_its_helper) {
    conversion_scene scene;
    ASSERT_EQ(scene.set(), "");
    const auto asked = std::chrono::steady_clock::now();
    auto cancelled = run_heapctl(scene.d, {"cancel", std::to_string(scene.c.job)});
    ASSERT_EQ(cancelled.exit_code, 0) << cancelled.err;
    EXPECT_TRUE(all_gone({scene.c.jhsdb}, std::chrono::seconds(5))) << "jhsdb still runs 5 s after the cancel";
    std::printf("jhsdb gone %.2f s after the cancel\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count());
    nlohmann::json job;
    for (int i = 0; i < 500; ++i) {
        for (const auto& j : nlohmann::json::parse(run_heapctl(scene.d, {"jobs", "--json"}).out))
            if (j["id"] == scene.c.job) job = j;
        if (job.value("state", "") == "cancelled") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
    std::printf("the conversion's job ended %.2f s after the cancel\n", seconds);
    EXPECT_EQ(job.value("state", ""), "cancelled") << job;
    EXPECT_EQ(::kill(scene.jvm.pid(), 0), 0);
}

// The daemon killed (SIGKILL) during the conversion: jhsdb dies with it, not minutes later.
TEST(sa_dump, a_daemon_killed_during_a_conversion_leaves_no_helper_running) {
    conversion_scene scene;
    ASSERT_EQ(scene.set(), "");
    scene.d.stop(SIGKILL);
    EXPECT_TRUE(all_gone({scene.c.jhsdb}, std::chrono::seconds(5))) << "jhsdb outlived the daemon";
    ::kill(scene.c.jhsdb, SIGKILL);
}

}  // namespace
}  // namespace heapd::test
