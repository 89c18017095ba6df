// Dump rules end to end: a real daemon (the server of heapd_daemon, run in this process on a real
// socket and store, the way `heapd serve` runs it) reads real JVMs' hsperfdata and dumps them as
// its rules say: a JVM whose old generation crosses a threshold is dumped once and not again
// within the cooldown; a scheduled rule dumps on time until its cap, and rules replaced while it
// serves keep their state by name. Also: which hsperfdata
// collectors count as old collections, checked against real JVMs of each collector.
//
// A dump job analyses its dump in a child process, /proc/self/exe analyse-fd: here that is this
// test program, whose main() then runs the daemon's analysis child, as heapd would.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <spdlog/sinks/basic_file_sink.h>

#include "daemon/analysis_child.h"
#include "daemon/jvm_facts.h"
#include "daemon/rule_match.h"
#include "daemon/rule_policy.h"
#include "daemon/server.h"
#include "formats/protocol.h"
#include "tests/support/jvm_process.h"
#include "tests/support/serve_process.h"

namespace heapd::test {
namespace {

using namespace std::chrono_literals;
using wire::json;

// The daemon with rules, serving on a thread of this process until destroyed (SIGTERM, as a
// service manager stops it).
class rule_daemon {
public:
    rule_daemon(std::vector<daemon::dump_rule> rules, std::chrono::milliseconds poll) {
        daemon::heapd_config config;
        daemon::serve_options& o = config.serve;
        o.socket_path = dir_.file("heapd.sock");
        o.store_dir = dir_.file("store");
        o.spool_dir = "";
        config.rules = std::move(rules);
        config.poll_interval = poll;
        auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(dir_.file("heapd.log"));
        auto log = std::make_shared<spdlog::logger>("heapd", sink);
        log->flush_on(spdlog::level::trace);
        auto s = daemon::server::open(config, log);
        if (!s) {
            ADD_FAILURE() << s.error().message;
            return;
        }
        server_ = std::move(*s);
        thread_ = std::thread([this] { server_->run(); });
    }
    ~rule_daemon() {
        if (thread_.joinable()) {
            ::kill(::getpid(), SIGTERM);
            thread_.join();
        }
        server_.reset();
    }
    bool serving() const { return server_ != nullptr; }
    // A reload's new rules, as the configuration's reload gives them.
    void set_rules(std::vector<daemon::dump_rule> rules, std::chrono::milliseconds poll) {
        server_->set_rules(std::move(rules), poll);
    }
    std::string log() const {
        std::ifstream in(dir_.file("heapd.log"));
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }
    // `heapctl --socket SOCKET args... --json`, parsed.
    json heapctl(std::vector<std::string> args) const {
        args.insert(args.begin(), {heapctl_binary(), "--socket", dir_.file("heapd.sock")});
        args.push_back("--json");
        auto r = run_command(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.exit_code == 0 ? json::parse(r.out) : json::array();
    }
    // The dump jobs of pid, oldest first.
    std::vector<json> dump_jobs(pid_t pid) const {
        std::vector<json> out;
        for (const json& j : heapctl({"jobs"}))
            if (j["kind"] == "dump" && j["jvm_pid"] == pid) out.insert(out.begin(), j);
        return out;
    }
    // Waits (at most 120 s) until pid has n dump jobs, all ended.
    bool wait_for_dumps(pid_t pid, std::size_t n) const {
        for (auto deadline = std::chrono::steady_clock::now() + 120s; std::chrono::steady_clock::now() < deadline;) {
            auto jobs = dump_jobs(pid);
            bool ended = jobs.size() >= n;
            for (const json& j : jobs) ended = ended && j["state"] != "queued" && j["state"] != "running";
            if (ended) return true;
            std::this_thread::sleep_for(200ms);
        }
        return false;
    }

private:
    shared_dir dir_;
    std::unique_ptr<daemon::server> server_;
    std::thread thread_;
};

// Regex special characters escaped.
std::string regex_quote(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
        out += c;
    }
    return out;
}

// The test's own JVM only (other programs on this machine run JVMs too): OldGenFill with its flag.
daemon::jvm_selector only(const std::string& flag) {
    daemon::jvm_selector s;
    s.main_class = "OldGen*";
    s.command = "OldGenFill [0-9]+ [0-9]+ " + regex_quote(flag) + "( |$)";
    s.command_re = std::regex(s.command, std::regex::ECMAScript);
    s.user = daemon::user_name_of(::geteuid());
    s.container = false;
    return s;
}

TEST(rule_watcher, a_jvm_crossing_the_old_generation_threshold_is_dumped_once_within_the_cooldown) {
    scratch_dir scratch;
    const std::string flag = scratch.file("fill-now");
    // 20% of the old generation live, a full collection every 100 ms; 80% once flag exists.
    demo_jvm jvm(java_main{"OldGenFill"}, {"-XX:+UseSerialGC", "-Xmx64m"}, {"20", "80", flag, "100"});
    ASSERT_TRUE(jvm.ready());
    daemon::dump_rule r;
    r.name = "full-old";
    r.select = only(flag);
    r.old_gen_percent = 60;
    r.old_gen_collections = 3;
    r.cooldown = 1h;
    r.max_dumps = 3;
    rule_daemon d({r}, 250ms);
    ASSERT_TRUE(d.serving());

    // Below the threshold: polled a dozen times, not dumped.
    std::this_thread::sleep_for(3s);
    EXPECT_TRUE(d.dump_jobs(jvm.pid()).empty()) << d.log();

    std::ofstream(flag).close();
    ASSERT_TRUE(d.wait_for_dumps(jvm.pid(), 1)) << d.log();
    // The condition keeps holding (80% after every collection): the cooldown holds the rule back.
    std::this_thread::sleep_for(4s);
    auto jobs = d.dump_jobs(jvm.pid());
    ASSERT_EQ(jobs.size(), 1u) << d.log();
    EXPECT_EQ(jobs[0]["state"], "done") << jobs[0];
    EXPECT_EQ(jobs[0]["trigger"], "rule:full-old");

    json entries = d.heapctl({"dumps"});
    ASSERT_EQ(entries.size(), 1u) << entries;
    const json& m = entries[0];
    EXPECT_EQ(m["trigger"], "rule:full-old");
    EXPECT_EQ(m["pid"], jvm.pid());
    EXPECT_EQ(m["has_dump"], true);
    EXPECT_EQ(m["has_report"], true);
    EXPECT_NE(m["command_line"].get<std::string>().find("OldGenFill"), std::string::npos) << m;
    // Its report, analysed: the kept byte arrays fill the heap.
    json report = d.heapctl({"report", m["id"].get<std::string>()});
    EXPECT_GT(report["summary"]["primitive_arrays"].get<long long>(), 400) << report.dump().substr(0, 2000);
    bool arrays = false;
    for (const json& row : report["histogram"]) arrays = arrays || row["class"] == "byte[]";
    EXPECT_TRUE(arrays) << report["histogram"].dump().substr(0, 2000);

    const std::string log = d.log();
    const std::string line = "rule full-old: dumping pid " + std::to_string(jvm.pid()) + " (OldGenFill) as job ";
    EXPECT_NE(log.find(line), std::string::npos) << log;
    EXPECT_NE(log.find("full after 3 old collections in a row (threshold 60%)"), std::string::npos) << log;
}

TEST(rule_watcher, a_scheduled_rule_dumps_on_time_until_its_cap) {
    scratch_dir scratch;
    const std::string flag = scratch.file("never");
    demo_jvm jvm(java_main{"OldGenFill"}, {"-XX:+UseSerialGC", "-Xmx64m"}, {"5", "5", flag, "1000"});
    ASSERT_TRUE(jvm.ready());
    daemon::dump_rule r;
    r.name = "every-2s";
    r.select = only(flag);
    r.every = 2s;
    r.cooldown = 0s;
    r.max_dumps = 2;
    r.live = false;
    const std::int64_t set_ms = daemon::now_ms();
    rule_daemon d({r}, 500ms);
    ASSERT_TRUE(d.serving());

    ASSERT_TRUE(d.wait_for_dumps(jvm.pid(), 2)) << d.log();
    // Capped: three more intervals pass without a third.
    std::this_thread::sleep_for(6s);
    auto jobs = d.dump_jobs(jvm.pid());
    ASSERT_EQ(jobs.size(), 2u) << d.log();
    for (const json& j : jobs) {
        EXPECT_EQ(j["state"], "done") << j;
        EXPECT_EQ(j["trigger"], "rule:every-2s");
    }
    // One interval after the rule first saw the JVM, then one after the first dump: never sooner,
    // and within a few polls (generous bounds: this machine is shared).
    const std::int64_t first = jobs[0]["created_ms"], second = jobs[1]["created_ms"];
    EXPECT_GE(first - set_ms, 2000 - 50);
    EXPECT_LE(first - set_ms, 30000);
    EXPECT_GE(second - first, 2000 - 50);
    EXPECT_LE(second - first, 30000);

    json entries = d.heapctl({"dumps"});
    ASSERT_EQ(entries.size(), 2u) << entries;
    for (const json& m : entries) {
        EXPECT_EQ(m["trigger"], "rule:every-2s");
        EXPECT_EQ(m["has_report"], true);
    }
    EXPECT_NE(d.log().find("rule every-2s: dumping pid " + std::to_string(jvm.pid()) +
                           " (OldGenFill) as job "), std::string::npos);
    EXPECT_NE(d.log().find(": scheduled every 2s"), std::string::npos) << d.log();

    // Rules replaced while serving: the rule that remains by name keeps its count (still capped),
    // a rule of another name starts afresh.
    d.set_rules({r}, 500ms);
    std::this_thread::sleep_for(5s);
    EXPECT_EQ(d.dump_jobs(jvm.pid()).size(), 2u) << d.log();
    r.name = "renamed";
    r.max_dumps = 1;
    d.set_rules({r}, 500ms);
    ASSERT_TRUE(d.wait_for_dumps(jvm.pid(), 3)) << d.log();
    std::this_thread::sleep_for(5s);
    jobs = d.dump_jobs(jvm.pid());
    ASSERT_EQ(jobs.size(), 3u) << d.log();
    EXPECT_EQ(jobs[2]["trigger"], "rule:renamed");
}

// Old collections as rules count them (rule_policy.h): collector 1, the full collections, for
// Serial, Parallel and G1; every collection for ZGC. System.gc() (jcmd GC.run) is one.
TEST(rule_watcher, old_collections_of_real_jvms_count_full_collections) {
    scratch_dir scratch;
    for (const char* gc : {"-XX:+UseSerialGC", "-XX:+UseParallelGC", "-XX:+UseG1GC", "-XX:+UseZGC"}) {
        SCOPED_TRACE(gc);
        demo_jvm jvm(java_main{"OldGenFill"}, {gc, "-Xmx64m"}, {"5", "5", scratch.file("never"), "3600000"});
        ASSERT_TRUE(jvm.ready());
        auto before = daemon::find_jvm_facts(jvm.pid());
        ASSERT_TRUE(before && before->summary);
        const std::int64_t n = daemon::old_collections(*before->summary);
        EXPECT_GE(n, 1);  // OldGenFill's own System.gc() calls while filling
        if (std::string_view(gc) != "-XX:+UseZGC") {
            bool full = false;
            for (const auto& c : before->summary->collectors)
                full = full || (c.index == 1 && c.name.find("full") != std::string::npos);
            EXPECT_TRUE(full);
        }
        ASSERT_EQ(jvm.jcmd({"GC.run"}).exit_code, 0);
        auto after = daemon::find_jvm_facts(jvm.pid());
        ASSERT_TRUE(after && after->summary);
        EXPECT_GE(daemon::old_collections(*after->summary), n + 1);
    }
}

} // namespace
} // namespace heapd::test

// The test program, or the daemon's analysis child when a dump job runs it (heapd analyse-fd).
int main(int argc, char** argv) {
    if (argc > 1 && std::string_view(argv[1]) == "analyse-fd") {
        std::string name, inflate_dir;
        pid_t parent = 0;
        for (int i = 2; i + 1 < argc; i += 2) {
            std::string_view key = argv[i];
            if (key == "--name") name = argv[i + 1];
            else if (key == "--inflate-dir") inflate_dir = argv[i + 1];
            else if (key == "--parent") parent = static_cast<pid_t>(std::stol(argv[i + 1]));
        }
        return heapd::daemon::analyse_fd_main(name, inflate_dir, parent);
    }
    ::signal(SIGPIPE, SIG_IGN);
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
