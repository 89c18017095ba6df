// Arming JVMs ahead of their OutOfMemoryError (daemon/oom/arm_jvm.h, oom_armer.h), end to end: a
// real JVM started with only -XX:OnOutOfMemoryError='heapd dump %p' (tests/java/OomExit.java) is
// found and armed by the daemon; its main thread then fills a static map until the error kills it
// and the JVM exits. The JVM wrote its dump before its hook ran, the hook handed it over, and the
// report names the leak. No thread dump in the JVM's output. The names and the hook's search for the
// armed dump, unit by unit, are tests/daemon/oom/arm_jvm_test.cpp.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "daemon/oom/arm_jvm.h"
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

void touch(const std::string& path) { std::ofstream(path) << "go\n"; }

// The JVM's output after its OutOfMemoryError: HotSpot's own lines about the dump it writes, and no
// thread dump (which a SIGQUIT to a JVM in its hook or exiting would print).
void expect_quiet_output(const std::string& out) {
    EXPECT_NE(out.find("Dumping heap to /tmp/heapd-oom-"), std::string::npos) << out;
    EXPECT_EQ(out.find("Full thread dump"), std::string::npos) << out;
    EXPECT_EQ(out.find("AttachListener::init"), std::string::npos) << out;
}

// Runs OomExit with the hook (and extra flags), lets it leak once armed, and checks that the dump
// the JVM wrote was handed over and reported though the JVM exited. restart: the daemon is
// restarted between the arming and the error.
void run_exiting_jvm(const std::vector<std::string>& extra, bool restart) {
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    scratch_dir dir;
    std::vector<std::string> flags = {"-Xmx64m", hook_flag(d, dir.path(), dir.file("unused-spool"))};
    for (std::string f : extra) {  // DIR stands for the test's directory
        if (auto at = f.find("DIR"); at != std::string::npos) f.replace(at, 3, dir.path());
        flags.push_back(f);
    }
    demo_jvm jvm(java_main{"OomExit"}, flags, {dir.file("go")}, dir.file("jvm.out"));
    ASSERT_TRUE(jvm.ready());
    json row = armed_row(d, jvm.pid());
    ASSERT_EQ(row.value("oom_arming", json::object()).value("state", ""), "armed") << row << d.log();
    const std::string armed_path = row["oom_arming"]["dump_path"].get<std::string>();
    EXPECT_TRUE(armed_path.starts_with("/tmp/heapd-oom-" + std::to_string(jvm.pid()) + "-")) << armed_path;
    EXPECT_EQ(jvm.jcmd({"VM.flags", "-all"}).out.find("HeapDumpPath                             = " + armed_path) ==
                  std::string::npos,
              false);
    if (restart) {
        ASSERT_EQ(d.stop(), 0);
        ASSERT_TRUE(d.start()) << d.log();
        json again = armed_row(d, jvm.pid());
        EXPECT_EQ(again.value("oom_arming", json::object()).value("state", ""), "armed") << again << d.log();
        EXPECT_EQ(again.value("oom_arming", json::object()).value("dump_path", ""), armed_path);
        EXPECT_EQ(again.value("oom_arming", json::object()).value("note", ""), "armed earlier");
    }
    touch(dir.file("go"));
    const double ms = hook_ms(dir.path());
    std::printf("hook returned in %.1f ms (with the shell that ran it)\n", ms);
    ASSERT_GE(ms, 0);
    EXPECT_LT(ms, 2000);
    EXPECT_EQ(file_text(dir.file("hook.out")), "");
    ASSERT_TRUE(ended(jvm.pid()));
    json job = finished_dump_job(d);
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    EXPECT_EQ(job["subject"], armed_path);
    expect_leak_report(d, jvm.pid(), "OomExit");
    EXPECT_FALSE(fs::exists(armed_path)) << "the hook leaves heapd's file behind";
    expect_quiet_output(file_text(dir.file("jvm.out")));
}

TEST(oom_arming, a_jvm_whose_main_thread_dies_of_its_oom_is_reported_after_it_exits) { run_exiting_jvm({}, false); }

TEST(oom_arming, a_jvm_with_exit_on_out_of_memory_error_is_reported) {
    run_exiting_jvm({"-XX:+ExitOnOutOfMemoryError"}, false);
}

// The JVM crashes on purpose after its hook (hs_err file, no core): its dump was written before.
TEST(oom_arming, a_jvm_with_crash_on_out_of_memory_error_is_reported) {
    run_exiting_jvm({"-XX:+CrashOnOutOfMemoryError", "-XX:ErrorFile=DIR/hs_err.log", "-XX:-CreateCoredumpOnCrash"},
                    false);
}

TEST(oom_arming, a_daemon_restarted_between_the_arming_and_the_oom_knows_the_jvm_armed) { run_exiting_jvm({}, true); }

// A JVM without an hsperfdata file (-XX:+PerfDisableSharedMem, as Cassandra ships it) is found by
// its libjvm.so and SIGQUIT handler, armed from what its command line says, and reported.
TEST(oom_arming, a_jvm_without_hsperfdata_is_armed_and_reported) {
    run_exiting_jvm({"-XX:+PerfDisableSharedMem"}, false);
}

// ... and with -XX:-UsePerfData it is listed and dumped on request like any other.
TEST(oom_arming, a_jvm_without_perf_data_is_listed_and_dumped_on_request) {
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    scratch_dir dir;
    demo_jvm jvm(java_main{"OomExit"}, {"-Xmx64m", "-XX:-UsePerfData"}, {dir.file("go")});
    ASSERT_TRUE(jvm.ready());
    json row;
    for (int i = 0; i < 100 && row.is_null(); ++i) {
        for (const json& j : json::parse(run_heapctl(d, {"jvms", "--json"}).out))
            if (j.value("pid", 0) == jvm.pid()) row = j;
        if (row.is_null()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_FALSE(row.is_null());
    EXPECT_EQ(row.value("main_class", ""), "OomExit") << row;
    EXPECT_FALSE(row.contains("oom_arming")) << row;  // no hook: not one arming is for
    auto dumped = run_heapctl(d, {"dump", std::to_string(jvm.pid()), "--wait"});
    ASSERT_EQ(dumped.exit_code, 0) << dumped.out << dumped.err << d.log();
    EXPECT_NE(dumped.out.find("OomExit"), std::string::npos) << dumped.out;
}

// Someone turns the flag off again (jcmd VM.set_flag): the next check arms the JVM again, at the
// same path, through the listener already up.
TEST(oom_arming, a_jvm_whose_flag_was_turned_off_is_armed_again) {
    shared_dir conf;
    std::ofstream(conf.file("heapd.toml")) << "[oom]\nrecheck = \"1s\"\n";
    serve_process d({"--spool", "", "--config", conf.file("heapd.toml")});
    ASSERT_TRUE(d.ready()) << d.log();
    scratch_dir dir;
    demo_jvm jvm(java_main{"OomExit"}, {"-Xmx64m", hook_flag(d, dir.path(), dir.file("unused-spool"))},
                 {dir.file("go")});
    ASSERT_TRUE(jvm.ready());
    json row = armed_row(d, jvm.pid());
    ASSERT_EQ(row.value("oom_arming", json::object()).value("state", ""), "armed") << row << d.log();
    auto flag = [&] { return jvm.jcmd({"VM.flags", "-all"}).out; };
    EXPECT_NE(flag().find("HeapDumpOnOutOfMemoryError               = true"), std::string::npos);
    auto off = jvm.jcmd({"VM.set_flag", "HeapDumpOnOutOfMemoryError", "false"});
    ASSERT_EQ(off.exit_code, 0) << off.out << off.err;
    // The flag was off once VM.set_flag returned. The daemon's check (every second) may set it
    // again before another jcmd could read it off, so only its coming back is waited for.
    bool again = false;
    for (int i = 0; i < 100 && !again; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        again = flag().find("HeapDumpOnOutOfMemoryError               = true") != std::string::npos;
    }
    EXPECT_TRUE(again) << d.log();
    EXPECT_NE(flag().find(row["oom_arming"]["dump_path"].get<std::string>()), std::string::npos);
}

// A container whose /tmp is too small for the JVM's heap: the JVM is not armed, and heapctl jvms
// says why.
TEST(oom_arming, a_jvm_whose_tmp_has_no_room_for_its_heap_is_not_armed_and_says_why) {
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    shared_dir work;
    isolation how{nullptr, true, work.path(), {d.dir(), work.path()}};
    how.tmp_size = "8m";
    isolated_jvm jvm(java_main{"OomExit"}, {"-Xmx64m", hook_flag(d, work.path(), work.file("spool"))},
                     {work.file("go")}, how);
    ASSERT_TRUE(jvm.ready());
    json row = armed_row(d, jvm.pid());
    ASSERT_EQ(row.value("oom_arming", json::object()).value("state", ""), "not_armed") << row << d.log();
    const std::string note = row["oom_arming"]["note"].get<std::string>();
    EXPECT_NE(note.find("its /tmp has "), std::string::npos) << note;
    EXPECT_NE(note.find("less than its heap may hold (64.0 MiB)"), std::string::npos) << note;
    auto listed = run_heapctl(d, {"jvms"});
    EXPECT_NE(listed.out.find("oom-NOT"), std::string::npos) << listed.out;
    EXPECT_NE(
        listed.out.find("pid " + std::to_string(jvm.pid()) + " is not armed for its OutOfMemoryError: its /tmp has"),
        std::string::npos)
        << listed.out;
}

// A JVM that cannot be armed (-XX:+DisableAttachMechanism) and exits on its error: its hook holds it
// while the daemon takes a core of it (gdb, as the JVM's user), then lets it go; the core is turned
// into HPROF by the JVM's own JDK (jhsdb) and reported. Nothing in the JVM's output.
TEST(oom_arming, a_jvm_that_cannot_be_armed_is_snapshotted_while_its_hook_holds_it) {
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    scratch_dir dir;
    demo_jvm jvm(java_main{"OomExit"},
                 {"-Xmx64m", "-XX:+DisableAttachMechanism", hook_flag(d, dir.path(), dir.file("unused-spool"))},
                 {dir.file("go")}, dir.file("jvm.out"));
    ASSERT_TRUE(jvm.ready());
    json row = armed_row(d, jvm.pid());
    ASSERT_EQ(row.value("oom_arming", json::object()).value("state", ""), "not_armed") << row << d.log();
    touch(dir.file("go"));
    const double ms = hook_ms(dir.path());
    std::printf("the hook held the JVM %.0f ms for its snapshot\n", ms);
    ASSERT_GE(ms, 0);
    EXPECT_EQ(file_text(dir.file("hook.out")), "");
    ASSERT_TRUE(ended(jvm.pid()));
    json job = finished_dump_job(d);
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    expect_leak_report(d, jvm.pid(), "OomExit");
    json dumps = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(dumps.size(), 1u);
    EXPECT_NE(dumps[0].value("file", "").find("core by gdb, HPROF by jhsdb"), std::string::npos) << dumps[0];
    const std::string out = file_text(dir.file("jvm.out"));
    EXPECT_EQ(out.find("Full thread dump"), std::string::npos) << out;
    EXPECT_EQ(out.find("Dumping heap"), std::string::npos) << out;
}

// The same in a container, for a JVM of another user run from a JDK only the container has: the
// host's gdb takes the core, and the container's jhsdb, in the JVM's mount and pid namespaces,
// turns it into HPROF.
TEST(oom_arming, a_container_jvm_that_cannot_be_armed_is_snapshotted_and_converted_by_its_own_jdk) {
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    temp_user owner;
    ASSERT_TRUE(owner.ok());
    shared_dir work;
    ASSERT_EQ(::chown(work.path().c_str(), owner.uid(), owner.gid()), 0);
    isolation how{&owner, true, work.path(), {d.dir(), work.path()}};
    how.own_jdk = true;
    isolated_jvm jvm(java_main{"OomExit"},
                     {"-Xmx64m", "-XX:+DisableAttachMechanism", hook_flag(d, work.path(), work.file("unused-spool"))},
                     {work.file("go")}, how);
    ASSERT_TRUE(jvm.ready());
    ASSERT_FALSE(fs::exists("/tmp/jdk/bin/jhsdb"));  // not on the host
    touch(work.file("go"));
    const double ms = hook_ms(work.path());
    std::printf("the hook held the container's JVM %.0f ms for its snapshot\n", ms);
    ASSERT_GE(ms, 0);
    EXPECT_EQ(file_text(work.file("hook.out")), "");
    json job = finished_dump_job(d);
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    EXPECT_EQ(job["jvm_pid"], jvm.pid()) << job;
    expect_leak_report(d, jvm.pid(), "OomExit");
    json dumps = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(dumps.size(), 1u);
    EXPECT_NE(dumps[0].value("file", "").find("core by gdb, HPROF by jhsdb"), std::string::npos) << dumps[0];
}

// Armed, then the daemon stops before the error: the hook spools the request and keeps the dump; the
// daemon, started again, adopts it and removes heapd's file from the JVM's /tmp.
TEST(oom_arming, an_armed_dump_spooled_while_the_daemon_was_down_is_adopted_and_removed) {
    shared_dir spool;
    serve_process d({"--spool", spool.path()});
    ASSERT_TRUE(d.ready()) << d.log();
    temp_user owner;
    ASSERT_TRUE(owner.ok());
    shared_dir work;
    ASSERT_EQ(::chown(work.path().c_str(), owner.uid(), owner.gid()), 0);
    isolated_jvm jvm(java_main{"OomExit"}, {"-Xmx64m", hook_flag(d, work.path(), spool.path())}, {work.file("go")},
                     isolation{&owner, false, work.path()});
    ASSERT_TRUE(jvm.ready());
    json row = armed_row(d, jvm.pid());
    ASSERT_EQ(row.value("oom_arming", json::object()).value("state", ""), "armed") << row << d.log();
    const std::string armed_path = row["oom_arming"]["dump_path"].get<std::string>();
    ASSERT_EQ(d.stop(), 0);
    touch(work.file("go"));
    ASSERT_GE(hook_ms(work.path()), 0);
    ASSERT_TRUE(ended(jvm.pid()));
    ASSERT_TRUE(fs::exists(armed_path));  // kept for the spooled request
    ASSERT_TRUE(d.start()) << d.log();
    json job = finished_dump_job(d);
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    EXPECT_EQ(job["subject"], armed_path);
    expect_leak_report(d, jvm.pid(), "OomExit", &owner);
    EXPECT_FALSE(fs::exists(armed_path)) << "heapd's file is left in /tmp";
}

// Two daemons on one host: a JVM whose hook names the first one's socket is armed by it alone.
// hsperfdata cuts the hook at " --socket" (it cannot tell the hook's words from the JVM's next
// argument), so the second one reads the hook through attach and leaves the JVM to the first; the
// dump name stays the first one's, tagged under its store's key.
TEST(oom_arming, a_jvm_whose_hook_names_another_daemon_is_left_to_it) {
    serve_process first({"--spool", ""}), second({"--spool", ""});
    ASSERT_TRUE(first.ready() && second.ready()) << first.log() << second.log();
    scratch_dir dir;
    demo_jvm jvm(java_main{"OomExit"}, {"-Xmx64m", hook_flag(first, dir.path(), dir.file("unused-spool"))},
                 {dir.file("go")});
    ASSERT_TRUE(jvm.ready());
    json row = armed_row(first, jvm.pid());
    ASSERT_EQ(row.value("oom_arming", json::object()).value("state", ""), "armed") << row << first.log();
    const std::string armed_path = row["oom_arming"]["dump_path"].get<std::string>();
    // Both have polled it a few times since (every 2 s).
    std::this_thread::sleep_for(std::chrono::seconds(5));
    for (const json& j : json::parse(run_heapctl(second, {"jvms", "--json"}).out))
        if (j.value("pid", 0) == jvm.pid()) {
            EXPECT_FALSE(j.contains("oom_arming")) << j;
        }
    EXPECT_EQ(second.log().find("oom arming: pid " + std::to_string(jvm.pid())), std::string::npos) << second.log();
    EXPECT_NE(jvm.jcmd({"VM.flags", "-all"}).out.find("HeapDumpPath                             = " + armed_path),
              std::string::npos);
}

// A hook that names no socket (`heapd dump %p`) talks to the daemon at the standard socket, or at
// the JVM's $HEAPD_SOCKET: a daemon elsewhere (a test's, a second one on the host) leaves such a JVM
// as it is (it used to arm it, until its next check), and arms the one whose $HEAPD_SOCKET names it.
TEST(oom_arming, a_hook_that_names_no_socket_is_armed_only_by_the_daemon_it_talks_to) {
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    scratch_dir dir;
    const std::string bare = "-XX:OnOutOfMemoryError=" + heapd_binary() + " dump %p";
    demo_jvm elsewhere(java_main{"OomExit"}, {"-Xmx64m", bare}, {dir.file("go")});
    ::setenv("HEAPD_SOCKET", d.socket().c_str(), 1);
    demo_jvm here(java_main{"OomExit"}, {"-Xmx64m", bare}, {dir.file("go-here")});
    ::unsetenv("HEAPD_SOCKET");
    ASSERT_TRUE(elsewhere.ready() && here.ready());
    json row = armed_row(d, here.pid());
    EXPECT_EQ(row.value("oom_arming", json::object()).value("state", ""), "armed") << row << d.log();
    std::this_thread::sleep_for(std::chrono::seconds(5));  // polled a few times (every 2 s)
    for (const json& j : json::parse(run_heapctl(d, {"jvms", "--json"}).out))
        if (j.value("pid", 0) == elsewhere.pid()) {
            EXPECT_FALSE(j.contains("oom_arming")) << j;
        }
    EXPECT_EQ(d.log().find("oom arming: pid " + std::to_string(elsewhere.pid())), std::string::npos) << d.log();
    EXPECT_NE(elsewhere.jcmd({"VM.flags", "-all"}).out.find("HeapDumpOnOutOfMemoryError               = false"),
              std::string::npos);
}

// The arming shows in heapctl jvms and in the metrics.
TEST(oom_arming, jvms_and_metrics_show_the_armed_jvms) {
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    scratch_dir dir;
    demo_jvm jvm(java_main{"OomExit"}, {"-Xmx64m", hook_flag(d, dir.path(), dir.file("unused-spool"))},
                 {dir.file("go")});
    ASSERT_TRUE(jvm.ready());
    ASSERT_EQ(armed_row(d, jvm.pid()).value("oom_arming", json::object()).value("state", ""), "armed");
    auto listed = run_heapctl(d, {"jvms"});
    bool shown = false;
    for (std::size_t at = 0, end; at < listed.out.size(); at = end + 1) {
        end = listed.out.find('\n', at);
        if (end == std::string::npos) end = listed.out.size();
        const std::string line = listed.out.substr(at, end - at);
        shown |= line.find(" " + std::to_string(jvm.pid()) + " ") != std::string::npos &&
                 line.find("oom-armed") != std::string::npos && line.find("OomExit") != std::string::npos;
    }
    EXPECT_TRUE(shown) << listed.out;
    auto m = run_heapctl(d, {"metrics"});
    ASSERT_EQ(m.exit_code, 0) << m.err;
    EXPECT_NE(m.out.find("heapd_oom_arming_jvms{state=\"armed\"} "), std::string::npos) << m.out;
    EXPECT_EQ(m.out.find("heapd_oom_arming_jvms{state=\"armed\"} 0\n"), std::string::npos) << m.out;
}

// A JVM that dumps on its own (HeapDumpOnOutOfMemoryError with its own path) is left as it is.
TEST(oom_arming, a_heap_dump_path_the_user_set_is_kept) {
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    scratch_dir dir;
    demo_jvm jvm(java_main{"OomExit"},
                 {"-Xmx64m", "-XX:HeapDumpPath=" + dir.path(), hook_flag(d, dir.path(), dir.file("unused-spool"))},
                 {dir.file("go")});
    ASSERT_TRUE(jvm.ready());
    json row = armed_row(d, jvm.pid());
    ASSERT_EQ(row.value("oom_arming", json::object()).value("state", ""), "own_path") << row;
    EXPECT_EQ(row.value("oom_arming", json::object()).value("dump_path", ""), dir.path());
    touch(dir.file("go"));
    ASSERT_GE(hook_ms(dir.path()), 0);
    ASSERT_TRUE(ended(jvm.pid()));
    json job = finished_dump_job(d);
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    EXPECT_EQ(job["subject"], dir.path() + "/java_pid" + std::to_string(jvm.pid()) + ".hprof");
    expect_leak_report(d, jvm.pid(), "OomExit");
}

// Another user's JVM, and a JVM in a container (its own /tmp, pid 1), armed and reported.
TEST(oom_arming, another_users_jvm_and_a_container_jvm_are_armed_and_reported) {
    temp_user owner;
    ASSERT_TRUE(owner.ok());
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    for (bool container : {false, true}) {
        SCOPED_TRACE(container ? "in a container" : "another user's");
        shared_dir work;
        ASSERT_EQ(::chown(work.path().c_str(), owner.uid(), owner.gid()), 0);
        std::vector<std::string> volumes;
        if (container) volumes = {d.dir(), work.path()};
        isolated_jvm jvm(java_main{"OomExit"}, {"-Xmx64m", hook_flag(d, work.path(), work.file("spool"))},
                         {work.file("go")}, isolation{&owner, container, work.path(), volumes});
        ASSERT_TRUE(jvm.ready());
        json row = armed_row(d, jvm.pid(), &owner);
        ASSERT_EQ(row.value("oom_arming", json::object()).value("state", ""), "armed") << row << d.log();
        const std::string armed_path = row["oom_arming"]["dump_path"].get<std::string>();
        EXPECT_TRUE(armed_path.starts_with("/tmp/heapd-oom-" + std::to_string(jvm.ns_pid()) + "-")) << armed_path;
        touch(work.file("go"));
        ASSERT_GE(hook_ms(work.path()), 0);
        ASSERT_TRUE(ended(jvm.pid()));
        json job = finished_dump_job(d, jvm.pid());
        ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
        EXPECT_EQ(job["owner_uid"], owner.uid());
        expect_leak_report(d, jvm.pid(), "OomExit", &owner);
        // The dump is gone from the JVM's /tmp.
        if (!container) {
            EXPECT_FALSE(fs::exists(armed_path));
        }
        // The next round expects one dump.
        for (const json& e : json::parse(run_heapctl(d, {"dumps", "--json"}).out))
            run_heapctl(d, {"rm", e["id"].get<std::string>()});
    }
}

}  // namespace
}  // namespace heapd::test
