// The OnOutOfMemoryError hook end to end: a real JVM runs out of memory through a growing static
// map (tests/java/OomLeak.java) with -XX:OnOutOfMemoryError='heapd dump %p'. The hook returns at
// once; the daemon dumps the JVM after it (or adopts the dump the JVM wrote itself, though the JVM
// has exited), or, when no daemon runs, the spooled request is handled when the daemon starts. The
// dump of another user's JVM is that user's: a stranger sees neither it nor its report.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "daemon/oom_hook.h"
#include "formats/protocol.h"
#include "tests/support/isolated_jvm.h"
#include "tests/support/jvm_process.h"
#include "tests/support/serve_process.h"

namespace heapd::test {
namespace {

using wire::json;
namespace fs = std::filesystem;

// -XX:OnOutOfMemoryError running the hook between two time stamps (HotSpot runs each ';'-separated
// command with /bin/sh -c, in order), so the test can measure how long the hook took.
std::string hook_flag(const serve_process& d, const std::string& dir, const std::string& spool) {
    return "-XX:OnOutOfMemoryError=date +%s%N > " + dir + "/t0;" + heapd_binary() + " dump %p --socket " +
           d.socket() + " --spool " + spool + " > " + dir + "/hook.out 2>&1;date +%s%N > " + dir + "/t1";
}

long long read_number(const std::string& path) {
    std::ifstream in(path);
    long long v = -1;
    in >> v;
    return v;
}

// Waits until the hook has run (t1 written), up to 120 s; its duration in ms, or -1.
double hook_ms(const std::string& dir) {
    for (int i = 0; i < 1200 && !fs::exists(dir + "/t1"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // t1 complete
    long long t0 = read_number(dir + "/t0"), t1 = read_number(dir + "/t1");
    return t0 > 0 && t1 >= t0 ? static_cast<double>(t1 - t0) / 1e6 : -1;
}

// Waits (up to 180 s) until the daemon has a finished dump job; its record.
json finished_dump_job(const serve_process& d) {
    for (int i = 0; i < 1800; ++i) {
        auto jobs = run_heapctl(d, {"jobs", "--json"});
        if (jobs.exit_code == 0)
            for (const json& j : json::parse(jobs.out))
                if (j["kind"] == "dump" && (j["state"] == "done" || j["state"] == "failed" || j["state"] == "cancelled"))
                    return j;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return json::object();
}

// heapctl report PID names the leaking map first, with its path; the entry says oom.
void expect_leak_report(const serve_process& d, pid_t pid) {
    auto r = run_heapctl(d, {"report", std::to_string(pid), "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err << d.log();
    json report = json::parse(r.out);
    const json& top = report["leak_suspects"]["suspects"].at(0);
    const std::string path = top["path"]["text"].get<std::string>();
    EXPECT_NE(path.find("OomLeak (static CACHE)"), std::string::npos) << path;
    EXPECT_NE(path.find("java.util.HashMap"), std::string::npos) << path;
    auto text = run_heapctl(d, {"report", std::to_string(pid)});
    EXPECT_NE(text.out.find("OomLeak (static CACHE)"), std::string::npos) << text.out;
    json dumps = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(dumps.size(), 1u);
    EXPECT_EQ(dumps[0]["trigger"], "oom");
    EXPECT_EQ(dumps[0]["pid"], pid);
    EXPECT_EQ(dumps[0]["has_dump"], true);
}

// Waits for the JVM to end (up to 60 s): gone, or a zombie its parent (demo_jvm) reaps later.
bool ended(pid_t pid) {
    for (int i = 0; i < 600; ++i) {
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string text(std::istreambuf_iterator<char>(stat), {});
        const auto close = text.rfind(')');
        if (!stat || close == std::string::npos || text.substr(close + 2, 1) == "Z") return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
}

TEST(oom_hook, names_the_dump_as_hotspot_does) {
    oom_settings oom;
    oom.heap_dump = true;
    EXPECT_EQ(daemon::oom_dump_name(oom, 42, false), "java_pid42.hprof");
    oom.heap_dump_path = "/var/dumps";
    EXPECT_EQ(daemon::oom_dump_name(oom, 42, true), "/var/dumps/java_pid42.hprof");
    oom.heap_dump_path = "/var/dumps/";
    EXPECT_EQ(daemon::oom_dump_name(oom, 42, true), "/var/dumps/java_pid42.hprof");
    oom.heap_dump_path = "dumps/app.hprof";
    EXPECT_EQ(daemon::oom_dump_name(oom, 42, false), "dumps/app.hprof");
}

TEST(oom_hook, the_daemon_dumps_the_jvm_after_its_hook_returns) {
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    scratch_dir dir;
    demo_jvm jvm(java_main{"OomLeak"}, {"-Xmx64m", hook_flag(d, dir.path(), dir.file("unused-spool"))}, {"600"});
    ASSERT_TRUE(jvm.ready());
    const double ms = hook_ms(dir.path());
    std::printf("hook returned in %.1f ms (with the shell that ran it)\n", ms);
    ASSERT_GE(ms, 0);
    EXPECT_LT(ms, 2000);
    std::ifstream out(dir.path() + "/hook.out");
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(out), {}), "");  // the hook writes nothing
    json job = finished_dump_job(d);
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    EXPECT_EQ(job["trigger"], "oom");
    expect_leak_report(d, jvm.pid());
}

TEST(oom_hook, the_jvms_own_dump_is_adopted_though_the_jvm_exits) {
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    scratch_dir dir;
    demo_jvm jvm(java_main{"OomLeak"},
                 {"-Xmx64m", "-XX:+HeapDumpOnOutOfMemoryError", "-XX:HeapDumpPath=" + dir.path(),
                  "-XX:+ExitOnOutOfMemoryError", hook_flag(d, dir.path(), dir.file("unused-spool"))},
                 {"600"});
    ASSERT_TRUE(jvm.ready());
    const double ms = hook_ms(dir.path());
    std::printf("hook returned in %.1f ms (with the shell that ran it)\n", ms);
    ASSERT_GE(ms, 0);
    EXPECT_LT(ms, 2000);
    ASSERT_TRUE(ended(jvm.pid()));
    json job = finished_dump_job(d);
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    const std::string own = dir.path() + "/java_pid" + std::to_string(jvm.pid()) + ".hprof";
    EXPECT_EQ(job["subject"], own);
    expect_leak_report(d, jvm.pid());
    // The very bytes the JVM wrote.
    json dumps = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    EXPECT_EQ(dumps[0]["file_bytes"].get<std::uintmax_t>(), fs::file_size(own));
}

TEST(oom_hook, a_request_spooled_while_the_daemon_is_stopped_is_handled_at_start) {
    shared_dir spool;
    serve_process d({"--spool", spool.path()});
    ASSERT_TRUE(d.ready()) << d.log();
    ASSERT_EQ(d.stop(), 0);
    scratch_dir dir;
    demo_jvm jvm(java_main{"OomLeak"},
                 {"-Xmx64m", "-XX:+HeapDumpOnOutOfMemoryError", "-XX:HeapDumpPath=" + dir.path(),
                  "-XX:+ExitOnOutOfMemoryError", hook_flag(d, dir.path(), spool.path())},
                 {"600"});
    ASSERT_TRUE(jvm.ready());
    const double ms = hook_ms(dir.path());
    std::printf("hook returned in %.1f ms with no daemon (with the shell that ran it)\n", ms);
    ASSERT_GE(ms, 0);
    EXPECT_LT(ms, 2000);
    ASSERT_TRUE(ended(jvm.pid()));
    std::size_t spooled = 0;
    for (const auto& e : fs::directory_iterator(spool.path())) spooled += e.path().extension() == ".json";
    EXPECT_EQ(spooled, 1u);

    ASSERT_TRUE(d.start()) << d.log();
    json job = finished_dump_job(d);
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    EXPECT_EQ(job["subject"], dir.path() + "/java_pid" + std::to_string(jvm.pid()) + ".hprof");
    expect_leak_report(d, jvm.pid());
    EXPECT_TRUE(fs::is_empty(spool.path()));
}

TEST(oom_hook, another_users_oom_dump_is_theirs_and_hidden_from_others) {
    temp_user owner, stranger;
    ASSERT_TRUE(owner.ok() && stranger.ok());
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    shared_dir work;  // the JVM's: its dump and the hook's time stamps
    ASSERT_EQ(::chown(work.path().c_str(), owner.uid(), owner.gid()), 0);
    isolated_jvm jvm(java_main{"OomLeak"},
                     {"-Xmx64m", "-XX:+HeapDumpOnOutOfMemoryError", "-XX:HeapDumpPath=" + work.path(),
                      "-XX:+ExitOnOutOfMemoryError", hook_flag(d, work.path(), work.file("spool"))},
                     {"600"}, isolation{&owner, false, work.path()});
    ASSERT_TRUE(jvm.ready());
    const double ms = hook_ms(work.path());
    std::printf("hook (as uid %u) returned in %.1f ms (with the shell that ran it)\n", owner.uid(), ms);
    ASSERT_GE(ms, 0);
    EXPECT_LT(ms, 2000);
    ASSERT_TRUE(ended(jvm.pid()));
    json job = finished_dump_job(d);
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    EXPECT_EQ(job["owner_uid"], owner.uid());

    // The owner sees the dump and its report; a stranger sees neither.
    auto mine = run_heapctl(d, {"report", std::to_string(jvm.pid())}, &owner);
    ASSERT_EQ(mine.exit_code, 0) << mine.err;
    EXPECT_NE(mine.out.find("OomLeak (static CACHE)"), std::string::npos) << mine.out;
    json dumps = json::parse(run_heapctl(d, {"dumps", "--json"}, &owner).out);
    ASSERT_EQ(dumps.size(), 1u);
    EXPECT_EQ(dumps[0]["owner_uid"], owner.uid());
    auto theirs = run_heapctl(d, {"report", std::to_string(jvm.pid())}, &stranger);
    EXPECT_EQ(theirs.exit_code, 5) << theirs.out << theirs.err;
    EXPECT_TRUE(json::parse(run_heapctl(d, {"dumps", "--json"}, &stranger).out).empty());
    auto by_id = run_heapctl(d, {"report", dumps[0]["id"].get<std::string>()}, &stranger);
    EXPECT_EQ(by_id.exit_code, 4) << by_id.err;
    // Kept by root, readable by the store's group only.
    struct stat st {};
    const std::string file = d.store() + "/entries/" + dumps[0]["id"].get<std::string>() + "/dump.hprof";
    ASSERT_EQ(::stat(file.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 0u);
    EXPECT_EQ(st.st_mode & 0777, 0640u);
}

// A JVM in a container (own pid and mount namespaces, a private /tmp) runs its hook there: it is
// pid 1 to its hook, which reaches the daemon through the socket's directory shared as a volume.
TEST(oom_hook, a_container_jvm_named_by_its_pid_in_the_container_is_dumped) {
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    shared_dir work;
    isolated_jvm jvm(java_main{"OomLeak"}, {"-Xmx64m", hook_flag(d, work.path(), work.file("unused-spool"))}, {"600"},
                     isolation{nullptr, true, work.path(), {d.dir(), work.path()}});
    ASSERT_TRUE(jvm.ready());
    ASSERT_EQ(jvm.ns_pid(), 1);
    const double ms = hook_ms(work.path());
    std::printf("hook in a container returned in %.1f ms (with the shell that ran it)\n", ms);
    ASSERT_GE(ms, 0);
    EXPECT_LT(ms, 2000);
    json job = finished_dump_job(d);
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    EXPECT_EQ(job["jvm_pid"], jvm.pid()) << job;
    expect_leak_report(d, jvm.pid());
}

// With no daemon running, the container's hook spools the request with the pid and the dump's path
// as the container sees them; the daemon, started later, finds the JVM by its pid namespace and
// adopts the JVM's own dump through its root.
TEST(oom_hook, a_container_jvms_spooled_request_is_handled_through_its_namespaces) {
    shared_dir spool, work;
    serve_process d({"--spool", spool.path()});
    ASSERT_TRUE(d.ready()) << d.log();
    ASSERT_EQ(d.stop(), 0);
    isolated_jvm jvm(java_main{"OomLeak"},
                     {"-Xmx64m", "-XX:+HeapDumpOnOutOfMemoryError", "-XX:HeapDumpPath=/tmp",
                      hook_flag(d, work.path(), spool.path())},
                     {"600"}, isolation{nullptr, true, work.path(), {spool.path(), work.path()}});
    ASSERT_TRUE(jvm.ready());
    const double ms = hook_ms(work.path());
    ASSERT_GE(ms, 0);
    std::size_t spooled = 0;
    for (const auto& e : fs::directory_iterator(spool.path())) spooled += e.path().extension() == ".json";
    ASSERT_EQ(spooled, 1u);
    // The JVM's dump is in the container's /tmp, which the host's /tmp does not show.
    const std::string own = "/proc/" + std::to_string(jvm.pid()) + "/root/tmp/java_pid1.hprof";
    ASSERT_TRUE(fs::exists(own));
    ASSERT_FALSE(fs::exists("/tmp/java_pid1.hprof"));

    ASSERT_TRUE(d.start()) << d.log();
    json job = finished_dump_job(d);
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    EXPECT_EQ(job["jvm_pid"], jvm.pid()) << job;
    EXPECT_EQ(job["subject"], "/tmp/java_pid1.hprof");
    expect_leak_report(d, jvm.pid());
    json dumps = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    EXPECT_EQ(dumps[0]["file_bytes"].get<std::uintmax_t>(), fs::file_size(own));  // adopted, not dumped again
    EXPECT_TRUE(fs::is_empty(spool.path()));
}

} // namespace
} // namespace heapd::test
