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

#include "daemon/oom/oom_hook.h"
#include "formats/wire/protocol.h"
#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/oom_scenario.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using wire::json;
namespace fs = std::filesystem;

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
    // Not armed (a hook under another name) and no snapshot (--hold 0): the daemon attaches once the
    // hook has returned.
    demo_jvm jvm(java_main{"OomLeak"},
                 {"-Xmx64m", hook_flag(d, dir.path(), dir.file("unused-spool"), unarmed_hook(dir.path()), "--hold 0")},
                 {"600"});
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
    expect_leak_report(d, jvm.pid(), "OomLeak");
}

// A JVM in its hook is at a safepoint: a SIGQUIT sent then is handled when it resumes, and with the
// trigger file gone by then (the attach timed out) it prints a thread dump into the application's
// output. The daemon waits for the hook to end before it starts the JVM's attach listener.
TEST(oom_hook, a_jvm_in_its_hook_is_not_signalled) {
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    scratch_dir dir;
    // The hook holds the JVM 6 s after handing over: the daemon's attempts fall inside it.
    demo_jvm jvm(java_main{"OomLeak"},
                 {"-Xmx64m", hook_flag(d, dir.path(), dir.file("unused-spool"), unarmed_hook(dir.path()), "--hold 0") +
                                 ";sleep 6"},
                 {"600"}, dir.file("jvm.out"));
    ASSERT_TRUE(jvm.ready());
    ASSERT_GE(hook_ms(dir.path()), 0);
    json job = finished_dump_job(d);
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    expect_leak_report(d, jvm.pid(), "OomLeak");
    const std::string out = file_text(dir.file("jvm.out"));
    EXPECT_EQ(out.find("Full thread dump"), std::string::npos) << out;
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
    expect_leak_report(d, jvm.pid(), "OomLeak");
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
    expect_leak_report(d, jvm.pid(), "OomLeak");
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
// pid 1 to its hook, which reaches the daemon through the socket's directory shared as a volume. No
// snapshot (--hold 0): the daemon dumps it through attach once the hook has returned.
TEST(oom_hook, a_container_jvm_named_by_its_pid_in_the_container_is_dumped) {
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    shared_dir work;
    isolated_jvm jvm(
        java_main{"OomLeak"},
        {"-Xmx64m", hook_flag(d, work.path(), work.file("unused-spool"), unarmed_hook(work.path()), "--hold 0")},
        {"600"}, isolation{nullptr, true, work.path(), {d.dir(), work.path()}});
    ASSERT_TRUE(jvm.ready());
    ASSERT_EQ(jvm.ns_pid(), 1);
    const double ms = hook_ms(work.path());
    std::printf("hook in a container returned in %.1f ms (with the shell that ran it)\n", ms);
    ASSERT_GE(ms, 0);
    EXPECT_LT(ms, 2000);
    json job = finished_dump_job(d);
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    EXPECT_EQ(job["jvm_pid"], jvm.pid()) << job;
    expect_leak_report(d, jvm.pid(), "OomLeak");
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
    expect_leak_report(d, jvm.pid(), "OomLeak");
    json dumps = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    EXPECT_EQ(dumps[0]["file_bytes"].get<std::uintmax_t>(), fs::file_size(own));  // adopted, not dumped again
    EXPECT_TRUE(fs::is_empty(spool.path()));
}

}  // namespace
}  // namespace heapd::test
