// No OutOfMemoryError dump is lost, whatever the daemon is doing when it comes (daemon/oom/
// oom_intake.h): real JVMs (tests/java/OomExit.java) armed by a real daemon run out of heap while
// the daemon's only worker is held and a dump of the same JVM is queued, while its queue is full,
// while it is stopped (SIGSTOP: it hangs), and while their spooled requests are being taken by a
// daemon that is killed (SIGKILL) or stopped (SIGTERM) right after its start, or at any moment of
// an OOM's way in, and eight at once. Each dump is reported once the daemon can, and heapd's armed
// file is removed only then.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "formats/wire/protocol.h"
#include "support/jvm_process.h"
#include "support/oom_scenario.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using wire::json;
namespace fs = std::filesystem;

const std::string peer_dump = std::string(HEAPD_PEER_DATA) + "/hprof-64.bin";

// A JVM that fills its heap once told to (dir/go), armed by the daemon: its dump is written at
// heapd's name in /tmp, and its hook (which spools to spool) hands it over.
struct armed_jvm {
    scratch_dir dir;
    std::unique_ptr<demo_jvm> jvm;
    std::string armed_path;

    armed_jvm(const serve_process& d, const std::string& spool, const std::string& heap = "-Xmx64m") {
        jvm = std::make_unique<demo_jvm>(java_main{"OomExit"},
                                         std::vector<std::string>{heap, hook_flag(d, dir.path(), spool)},
                                         std::vector<std::string>{dir.file("go")});
        if (!jvm->ready()) return;
        json row = armed_row(d, jvm->pid());
        if (row.value("oom_arming", json::object()).value("state", "") == "armed")
            armed_path = row["oom_arming"]["dump_path"].get<std::string>();
    }
    bool ready() const { return !armed_path.empty(); }
    pid_t pid() const { return jvm->pid(); }
    void go() const { std::ofstream(dir.file("go")) << "go\n"; }
};

// n armed JVMs of the daemon (armed_jvm) and their pids; fewer when one could not be armed.
struct armed_jvms {
    std::vector<std::unique_ptr<armed_jvm>> jvms;
    std::multiset<pid_t> pids;
    armed_jvms(const serve_process& d, const std::string& spool, std::size_t n, const std::string& heap) {
        for (std::size_t i = 0; i < n; ++i) {
            auto j = std::make_unique<armed_jvm>(d, spool, heap);
            if (!j->ready()) return;
            pids.insert(j->pid());
            jvms.push_back(std::move(j));
        }
    }
};

// The pids of the dumps kept with trigger oom.
std::multiset<pid_t> oom_entries(const serve_process& d) {
    std::multiset<pid_t> pids;
    auto r = run_heapctl(d, {"dumps", "--json"});
    if (r.exit_code != 0) return pids;
    for (const json& e : json::parse(r.out))
        if (e.value("trigger", "") == "oom") pids.insert(static_cast<pid_t>(e.value("pid", 0)));
    return pids;
}

// The OOM dumps in a store no daemon serves: its entries' metadata read directly.
std::size_t stored_oom_entries(const std::string& store) {
    std::size_t n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(store + "/entries", ec)) {
        std::ifstream in(e.path() / "metadata.json");
        json m = json::parse(in, nullptr, false);
        n += m.is_object() && m.value("trigger", "") == "oom";
    }
    return n;
}

// Waits (up to 180 s) until the daemon keeps an OOM dump of each of pids; what it keeps then.
std::multiset<pid_t> wait_for_oom_entries(const serve_process& d, const std::multiset<pid_t>& pids) {
    std::multiset<pid_t> kept;
    for (int i = 0; i < 1800 && (kept = oom_entries(d)) != pids; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return kept;
}

// The daemon's one worker held: an analysis of a big dump whose analysis process is stopped
// (SIGSTOP) until this goes.
class held_worker {
public:
    explicit held_worker(const serve_process& d) : client_(d.socket()) {
        if (queue_analysis(client_, big_dump()) == 0) return;
        for (int i = 0; i < 3000 && child_ <= 0; ++i) {
            auto children = analysis_processes_of(d.store());
            if (!children.empty() && ::kill(children.front(), SIGSTOP) == 0)
                child_ = children.front();
            else
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    ~held_worker() { release(); }
    bool holding() const { return child_ > 0; }
    void release() {
        if (child_ > 0) ::kill(child_, SIGCONT);
        child_ = -1;
    }

private:
    raw_client client_;
    pid_t child_ = -1;
};

// The dump jobs the daemon lists.
json dump_jobs(const serve_process& d) {
    json out = json::array();
    auto r = run_heapctl(d, {"jobs", "--json"});
    if (r.exit_code == 0)
        for (const json& j : json::parse(r.out))
            if (j["kind"] == "dump") out.push_back(j);
    return out;
}

// A daemon with one worker, held (held_worker), and an armed JVM: the scene of the first two faults.
struct held_daemon {
    shared_dir spool;
    serve_process d{{"--spool", spool.path(), "--workers", "1"}};
    std::unique_ptr<armed_jvm> jvm;
    std::unique_ptr<held_worker> held;

    // Empty when the scene is set, else what went wrong.
    std::string set() {
        if (!d.ready()) return "no daemon: " + d.log();
        jvm = std::make_unique<armed_jvm>(d, spool.path());
        if (!jvm->ready()) return "the JVM was not armed: " + d.log();
        held = std::make_unique<held_worker>(d);
        return held->holding() ? "" : "the worker could not be held: " + d.log();
    }
    // The JVM runs out of heap; true once its hook has run and it has exited.
    bool oom() const {
        jvm->go();
        return hook_ms(jvm->dir.path()) >= 0 && ended(jvm->pid());
    }
    // The worker let go: the OOM's dump must be kept and its report name the leak.
    void expect_reported() {
        held->release();
        const pid_t pid = jvm->pid();
        EXPECT_EQ(wait_for_oom_entries(d, {pid}), std::multiset<pid_t>{pid}) << d.log();
        auto report = run_heapctl(d, {"report", std::to_string(pid)});
        EXPECT_NE(report.out.find("OomExit (static CACHE)"), std::string::npos) << report.out << report.err;
        EXPECT_FALSE(fs::exists(jvm->armed_path)) << "heapd's file is left in /tmp";
    }
};

TEST(oom_faults, an_oom_while_a_dump_of_the_same_jvm_is_queued_is_reported) {
    held_daemon scene;
    ASSERT_EQ(scene.set(), "");
    // A dump asked for by hand waits behind the held analysis; then the JVM runs out of heap.
    auto asked = run_heapctl(scene.d, {"dump", std::to_string(scene.jvm->pid())});
    ASSERT_EQ(asked.exit_code, 0) << asked.err;
    ASSERT_TRUE(scene.oom());
    EXPECT_TRUE(fs::exists(scene.jvm->armed_path)) << "removed before its entry is kept";
    scene.expect_reported();
}

TEST(oom_faults, an_oom_while_the_queue_is_full_is_reported) {
    held_daemon scene;
    ASSERT_EQ(scene.set(), "");
    // The queue full for root (32 jobs wait, and the 8 kept for root's): one more is refused.
    raw_client c(scene.d.socket());
    for (int i = 0; i < 40; ++i) ASSERT_NE(queue_analysis(c, peer_dump), 0u) << i << scene.d.log();
    ASSERT_EQ(queue_analysis(c, peer_dump), 0u);
    ASSERT_TRUE(scene.oom());
    scene.expect_reported();
}

TEST(oom_faults, an_oom_job_a_user_cancels_leaves_no_file_of_heapd_in_the_jvms_tmp) {
    held_daemon scene;
    ASSERT_EQ(scene.set(), "");
    ASSERT_TRUE(scene.oom());
    // Its job waits behind the held worker, the JVM gone; its owner cancels it.
    std::uint64_t job = 0;
    for (int i = 0; i < 100 && job == 0; ++i) {
        for (const json& j : dump_jobs(scene.d))
            if (j.value("trigger", "") == "oom") job = j.value("id", std::uint64_t{0});
        if (job == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_NE(job, 0u) << scene.d.log();
    ASSERT_TRUE(fs::exists(scene.jvm->armed_path));
    auto cancelled = run_heapctl(scene.d, {"cancel", std::to_string(job)});
    ASSERT_EQ(cancelled.exit_code, 0) << cancelled.err;
    // The request is given up (logged just after the file goes).
    for (int i = 0; i < 100 && scene.d.log().find("was cancelled") == std::string::npos; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_NE(scene.d.log().find("was cancelled"), std::string::npos) << scene.d.log();
    EXPECT_FALSE(fs::exists(scene.jvm->armed_path)) << "heapd's armed file is left in /tmp: " << scene.d.log();
    scene.held->release();
    EXPECT_TRUE(oom_entries(scene.d).empty());
}

// Three JVMs run out of heap while the daemon is down; it is stopped (how: sig) as soon as it has
// begun to take their spooled requests, then started again.
void stopped_while_taking_the_spool(int sig) {
    shared_dir spool;
    serve_process d({"--spool", spool.path(), "--workers", "1"});
    ASSERT_TRUE(d.ready()) << d.log();
    armed_jvms armed(d, spool.path(), 3, "-Xmx128m");
    ASSERT_EQ(armed.jvms.size(), std::size_t{3}) << d.log();
    auto& [jvms, pids] = armed;
    ASSERT_EQ(d.stop(), 0);
    for (auto& j : jvms) j->go();
    for (auto& j : jvms) {
        ASSERT_GE(hook_ms(j->dir.path()), 0);
        ASSERT_TRUE(ended(j->pid()));
    }
    ASSERT_TRUE(d.start()) << d.log();
    json jobs;
    for (int i = 0; i < 3000 && (jobs = dump_jobs(d)).empty(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_FALSE(jobs.empty()) << d.log();
    d.stop(sig);
    // The stop came before all three were kept (else this test tries nothing).
    ASSERT_LT(stored_oom_entries(d.store()), 3u);
    ASSERT_TRUE(d.start()) << d.log();
    EXPECT_EQ(wait_for_oom_entries(d, pids), pids) << d.log();
    for (auto& j : jvms) EXPECT_FALSE(fs::exists(j->armed_path)) << j->armed_path;
    EXPECT_TRUE(fs::is_empty(spool.path()));
}

TEST(oom_faults, oom_dumps_spooled_while_the_daemon_was_down_survive_its_kill_right_after_it_starts) {
    stopped_while_taking_the_spool(SIGKILL);
}

TEST(oom_faults, oom_dumps_spooled_while_the_daemon_was_down_survive_its_stop_right_after_it_starts) {
    stopped_while_taking_the_spool(SIGTERM);
}

// A hung daemon (SIGSTOP) takes the hooks' connections into its backlog and never answers: the
// hooks spool their requests after their wait and remove nothing; the daemon, killed and started
// again, reports both.
TEST(oom_faults, ooms_while_the_daemon_hangs_are_spooled_and_reported_after_its_restart) {
    shared_dir spool;
    serve_process d({"--spool", spool.path()});
    ASSERT_TRUE(d.ready()) << d.log();
    armed_jvm a(d, spool.path()), b(d, spool.path());
    ASSERT_TRUE(a.ready() && b.ready()) << d.log();
    ASSERT_EQ(::kill(d.pid(), SIGSTOP), 0);
    a.go();
    b.go();
    for (const armed_jvm* j : {&a, &b}) {
        const double ms = hook_ms(j->dir.path());
        std::printf("hook of a JVM whose daemon hangs returned in %.0f ms\n", ms);
        ASSERT_GE(ms, 0);
        EXPECT_LT(ms, 10000);
        ASSERT_TRUE(ended(j->pid()));
        EXPECT_TRUE(fs::exists(j->armed_path));
    }
    EXPECT_EQ(std::distance(fs::directory_iterator(spool.path()), fs::directory_iterator()), 2);
    d.stop(SIGKILL);
    ASSERT_TRUE(d.start()) << d.log();
    EXPECT_EQ(wait_for_oom_entries(d, {a.pid(), b.pid()}), (std::multiset<pid_t>{a.pid(), b.pid()})) << d.log();
    EXPECT_FALSE(fs::exists(a.armed_path));
    EXPECT_FALSE(fs::exists(b.armed_path));
    EXPECT_TRUE(fs::is_empty(spool.path()));
}

// A daemon that answers late (stopped for 3 s, then continued) reads the hook's request after the
// hook has spooled it: the request is taken once, from whichever way reached it first.
TEST(oom_faults, a_request_both_handed_over_late_and_spooled_is_reported_once) {
    shared_dir spool;
    serve_process d({"--spool", spool.path()});
    ASSERT_TRUE(d.ready()) << d.log();
    armed_jvm jvm(d, spool.path());
    ASSERT_TRUE(jvm.ready()) << d.log();
    ASSERT_EQ(::kill(d.pid(), SIGSTOP), 0);
    jvm.go();
    ASSERT_GE(hook_ms(jvm.dir.path()), 0);
    ASSERT_TRUE(ended(jvm.pid()));
    ASSERT_EQ(::kill(d.pid(), SIGCONT), 0);
    EXPECT_EQ(wait_for_oom_entries(d, {jvm.pid()}), std::multiset<pid_t>{jvm.pid()}) << d.log();
    std::this_thread::sleep_for(std::chrono::seconds(3));  // a second entry would be made by now
    EXPECT_EQ(oom_entries(d), std::multiset<pid_t>{jvm.pid()}) << d.log();
    EXPECT_EQ(dump_jobs(d).size(), 1u) << dump_jobs(d).dump(2);
    EXPECT_TRUE(fs::is_empty(spool.path()));
}

// An OOM whose job fails for want of room in the store (a 16 MiB tmpfs) is tried again 20 s later;
// meanwhile the file the JVM wrote is removed, as a container removed at its JVM's exit takes its
// /tmp, and the store is given room. The dump heapd held since the hook passed it is kept then.
TEST(oom_faults, an_oom_tried_again_after_its_dumps_file_is_gone_is_kept_from_the_dump_held) {
    shared_dir spool, files;
    const std::string config = files.file("heapd.toml");
    std::ofstream(config) << "[daemon]\ndisk_reserve = \"0\"\ndisk_reserve_percent = 0\n";
    serve_process d({"--spool", spool.path(), "--config", config}, small_store_launcher("16m"));
    ASSERT_TRUE(d.ready()) << d.log();
    armed_jvm jvm(d, spool.path(), "-Xmx64m");
    ASSERT_TRUE(jvm.ready()) << d.log();
    jvm.go();
    ASSERT_GE(hook_ms(jvm.dir.path()), 0);
    ASSERT_TRUE(ended(jvm.pid()));
    for (int i = 0; i < 600 && d.log().find("tried again in 20 s") == std::string::npos; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_NE(d.log().find("not enough free space"), std::string::npos) << d.log();
    ASSERT_TRUE(fs::remove(jvm.armed_path));
    auto grown = run_command({"nsenter", "--mount=/proc/" + std::to_string(d.pid()) + "/ns/mnt", "mount", "-o",
                              "remount,size=512m", d.store()});
    ASSERT_EQ(grown.exit_code, 0) << grown.err;
    EXPECT_EQ(wait_for_oom_entries(d, {jvm.pid()}), std::multiset<pid_t>{jvm.pid()}) << d.log();
    auto report = run_heapctl(d, {"report", std::to_string(jvm.pid())});
    EXPECT_NE(report.out.find("OomExit (static CACHE)"), std::string::npos) << report.out << report.err;
}

// An OOM storm: eight JVMs run out of heap within a second; each dump is reported once, and heapd's
// armed files are all removed.
TEST(oom_faults, eight_ooms_within_a_second_are_all_reported) {
    shared_dir spool;
    serve_process d({"--spool", spool.path()});
    ASSERT_TRUE(d.ready()) << d.log();
    armed_jvms armed(d, spool.path(), 8, "-Xmx32m");
    ASSERT_EQ(armed.jvms.size(), std::size_t{8}) << d.log();
    auto& [jvms, pids] = armed;
    const auto start = std::chrono::steady_clock::now();
    for (auto& j : jvms) j->go();
    EXPECT_EQ(wait_for_oom_entries(d, pids), pids) << d.log();
    std::printf("8 OOMs: the last reported %.1f s after they were set off\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    for (auto& j : jvms) EXPECT_FALSE(fs::exists(j->armed_path)) << j->armed_path;
    EXPECT_TRUE(fs::is_empty(spool.path()));
}

// The daemon stopped at any moment of an OOM's way in: six JVMs run out of heap one after the
// other, and each time, once its hook has started, the daemon is killed (SIGKILL) or stopped
// (SIGTERM) after 0 to 900 ms (the hook handing the dump over, the intake record, the job's copy
// and analysis, the entry's commit), then started again. Every dump is reported once, and heapd's
// armed files and the spool are left empty.
TEST(oom_faults, a_daemon_stopped_at_any_moment_of_an_ooms_intake_loses_none) {
    shared_dir spool;
    serve_process d({"--spool", spool.path()});
    ASSERT_TRUE(d.ready()) << d.log();
    const int delays_ms[] = {0, 30, 100, 250, 500, 900};
    armed_jvms armed(d, spool.path(), std::size(delays_ms), "-Xmx32m");
    ASSERT_EQ(armed.jvms.size(), std::size_t{std::size(delays_ms)}) << d.log();
    auto& [jvms, pids] = armed;
    for (std::size_t i = 0; i < jvms.size(); ++i) {
        const armed_jvm& j = *jvms[i];
        j.go();
        for (int k = 0; k < 6000 && !fs::exists(j.dir.file("t0")); ++k)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        ASSERT_TRUE(fs::exists(j.dir.file("t0"))) << "the hook of JVM " << i << " did not start";
        std::this_thread::sleep_for(std::chrono::milliseconds(delays_ms[i]));
        d.stop(i % 2 == 0 ? SIGKILL : SIGTERM);
        ASSERT_TRUE(d.start()) << d.log();
    }
    for (auto& j : jvms) ASSERT_TRUE(ended(j->pid()));
    EXPECT_EQ(wait_for_oom_entries(d, pids), pids) << d.log();
    // Where the stops fell: the daemon's words about the requests it found.
    std::istringstream lines(d.log());
    for (std::string line; std::getline(lines, line);)
        if (line.find("OOM intake:") != std::string::npos || line.find("spooled request") != std::string::npos ||
            line.find("interrupted") != std::string::npos || line.find("kept as") != std::string::npos)
            std::printf("%s\n", line.c_str());
    std::this_thread::sleep_for(std::chrono::seconds(2));  // a second entry of one would be made by now
    EXPECT_EQ(oom_entries(d), pids) << d.log();
    for (auto& j : jvms) EXPECT_FALSE(fs::exists(j->armed_path)) << j->armed_path;
    EXPECT_TRUE(fs::is_empty(spool.path()));
}

}  // namespace
}  // namespace heapd::test
