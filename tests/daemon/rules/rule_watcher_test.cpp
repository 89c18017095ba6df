// Dump rules end to end: a real daemon (tests/support/rule_daemon.h) reads real JVMs' hsperfdata
// and dumps them as its rules say: a JVM whose old generation crosses a threshold is dumped once
// and not again within the cooldown; a scheduled rule dumps on time until its cap, and rules
// replaced while it serves keep their state by name; a rule's dump of a JVM that takes no attach is
// taken from outside. Also: the occupancy after collections read
// from real JVMs of each collector.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "daemon/jvms/jvm_facts.h"
#include "daemon/rules/rule_match.h"
#include "formats/hsperf/gc_occupancy.h"
#include "support/jvm_process.h"
#include "support/rule_daemon.h"
#include "support/test_cgroup.h"

namespace heapd::test {
namespace {

using namespace std::chrono_literals;
using wire::json;

// The test's own JVM only (other programs on this machine run JVMs too): OldGenFill with its flag.
daemon::jvm_selector only(const std::string& flag) {
    daemon::jvm_selector s = selector("OldGen*", "OldGenFill [0-9]+ [0-9]+ " + regex_quote(flag) + "( |$)");
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
    // Its report, analyzed: the kept byte arrays fill the heap.
    json report = d.heapctl({"report", m["id"].get<std::string>()});
    EXPECT_GT(report["summary"]["primitive_arrays"].get<long long>(), 400) << report.dump().substr(0, 2000);
    bool arrays = false;
    for (const json& row : report["histogram"]) arrays = arrays || row["class"] == "byte[]";
    EXPECT_TRUE(arrays) << report["histogram"].dump().substr(0, 2000);

    const std::string log = d.log();
    const std::string line = "rule full-old: dumping pid " + std::to_string(jvm.pid()) + " (OldGenFill) as job ";
    EXPECT_NE(log.find(line), std::string::npos) << log;
    EXPECT_NE(log.find("% full after collections, 3 measurements in a row (threshold 60%)"), std::string::npos) << log;
}

// A JVM whose direct buffers fill its memory cgroup is dumped before the kernel kills it, and the
// dump's report names what holds the buffers; one that holds a steady share below the threshold is
// never dumped.
TEST(rule_watcher, resident_memory_near_the_cgroups_limit_is_dumped_and_a_steady_share_below_is_not) {
    test_cgroup full("memory"), steady("memory");
    if (!full.ok() || !steady.ok()) GTEST_SKIP() << "no writable cgroup v1 memory hierarchy here";
    const std::string limit = std::to_string(400 << 20);
    ASSERT_TRUE(full.set("memory.limit_in_bytes", limit) && steady.set("memory.limit_in_bytes", limit));
    demo_jvm filling(java_main{"OffHeap"}, {"-Xmx64m", "-XX:MaxDirectMemorySize=1g"},
                     {"300", "4"});  // about 85% of 400 MiB
    demo_jvm holding(java_main{"OffHeap"}, {"-Xmx64m", "-XX:MaxDirectMemorySize=1g"}, {"200", "5"});  // about 60%
    ASSERT_TRUE(filling.ready() && holding.ready());
    ASSERT_TRUE(full.add(filling.pid()) && steady.add(holding.pid()));
    daemon::dump_rule r;
    r.name = "rss";
    r.select = selector("OffHeap", "OffHeap (300 4|200 5)$");
    r.select.user = daemon::user_name_of(::geteuid());
    r.memory_percent = 75;
    r.memory_polls = 2;
    r.cooldown = 1h;
    rule_daemon d({r}, 250ms);
    ASSERT_TRUE(d.serving());

    ASSERT_TRUE(d.wait_for_dumps(filling.pid(), 1)) << d.log();
    std::this_thread::sleep_for(3s);  // a dozen polls more
    const auto jobs = d.dump_jobs(filling.pid());
    ASSERT_EQ(jobs.size(), 1u) << d.log();  // the cooldown holds the rule back
    EXPECT_EQ(jobs[0]["trigger"], "rule:rss");
    EXPECT_EQ(jobs[0]["state"], "done") << jobs[0];
    EXPECT_TRUE(d.dump_jobs(holding.pid()).empty()) << d.log();
    const std::string log = d.log();
    EXPECT_NE(log.find("rule rss: dumping pid " + std::to_string(filling.pid()) + " (OffHeap)"), std::string::npos)
        << log;
    EXPECT_NE(log.find("of 400 MiB, cgroup v1 " + full.path() + "), 2 polls in a row (threshold 75%)"),
              std::string::npos)
        << log;
    // The evidence says who holds the memory: the dump's report finds the 300 buffers of 1 MiB
    // under OffHeap's static field HELD.
    const json report = d.heapctl({"report", std::to_string(filling.pid())});
    const json& buffers = report["off_heap"]["direct_buffers"];
    ASSERT_FALSE(buffers["holders"].empty()) << report["off_heap"].dump().substr(0, 2000);
    EXPECT_EQ(buffers["holders"][0]["count"], 300);
    EXPECT_EQ(buffers["holders"][0]["bytes"], 300 << 20);
    EXPECT_NE(buffers["holders"][0]["path"]["text"].get<std::string>().find("class OffHeap (static HELD)"),
              std::string::npos)
        << buffers;
    EXPECT_EQ(buffers["jvm"]["max_bytes"], 1 << 30);
}

// A JVM whose direct buffers grow 20 MiB a second in a 400 MiB cgroup is dumped once the trend of its
// resident memory says it reaches the limit within the bound, well before it does; one that holds
// a steady share is never dumped.
TEST(rule_watcher, resident_memory_seen_rising_to_the_limit_is_dumped_before_it_gets_there) {
    test_cgroup leaking("memory"), steady("memory");
    if (!leaking.ok() || !steady.ok()) GTEST_SKIP() << "no writable cgroup v1 memory hierarchy here";
    const std::string limit = std::to_string(400 << 20);
    ASSERT_TRUE(leaking.set("memory.limit_in_bytes", limit) && steady.set("memory.limit_in_bytes", limit));
    scratch_dir scratch;
    const std::string trigger = scratch.file("leak");
    demo_jvm filling(java_main{"OffHeap"}, {"-Xmx64m", "-XX:MaxDirectMemorySize=1g"}, {"0", "1", trigger, "20"});
    demo_jvm holding(java_main{"OffHeap"}, {"-Xmx64m", "-XX:MaxDirectMemorySize=1g"}, {"200", "2"});
    ASSERT_TRUE(filling.ready() && holding.ready());
    ASSERT_TRUE(leaking.add(filling.pid()) && steady.add(holding.pid()));
    daemon::dump_rule r;
    r.name = "rss-trend";
    r.select = selector("OffHeap", "OffHeap (0 1 .* 20|200 2)$");
    r.select.user = daemon::user_name_of(::geteuid());
    r.memory_full_within = 60s;
    r.memory_window = 6s;
    r.cooldown = 1h;
    rule_daemon d({r}, 250ms);
    ASSERT_TRUE(d.serving());
    std::this_thread::sleep_for(8s);  // a window and more of both holding still: no dump
    EXPECT_TRUE(d.dump_jobs(filling.pid()).empty()) << d.log();
    std::ofstream(trigger) << "go";
    const auto leak_started = std::chrono::steady_clock::now();
    ASSERT_TRUE(d.wait_for_dumps(filling.pid(), 1)) << d.log();
    const auto dumped = std::chrono::steady_clock::now();
    const auto jobs = d.dump_jobs(filling.pid());
    ASSERT_EQ(jobs.size(), 1u) << d.log();
    EXPECT_EQ(jobs[0]["trigger"], "rule:rss-trend");
    EXPECT_EQ(jobs[0]["state"], "done") << jobs[0];
    // At 20 MiB/s from about 60 MiB the limit is 17 s away; the dump is done well before.
    EXPECT_LT(dumped - leak_started, 12s);
    EXPECT_TRUE(d.dump_jobs(holding.pid()).empty()) << d.log();
    const std::string log = d.log();
    EXPECT_NE(log.find("resident memory at its limit (400 MiB, cgroup v1 " + leaking.path() + ") in about "),
              std::string::npos)
        << log;
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
    EXPECT_NE(d.log().find("rule every-2s: dumping pid " + std::to_string(jvm.pid()) + " (OldGenFill) as job "),
              std::string::npos);
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

// A sampling rule has heapd's agent sample a JVM when it fires (here on a schedule), once; a later
// dump of the JVM then says where its suspect's objects were allocated.
TEST(rule_watcher, a_sampling_rule_starts_the_agent_and_a_later_dump_names_the_allocating_line) {
    scratch_dir scratch;
    const std::string trigger = scratch.file("go");
    demo_jvm jvm(java_main{"AllocSites"}, {"-Xmx512m"}, {trigger});
    ASSERT_TRUE(jvm.ready());
    daemon::dump_rule r;
    r.name = "sample-allocs";
    r.select = selector("AllocSites", regex_quote(trigger));
    r.every = 1s;
    r.action = daemon::rule_action::sample;
    r.sample_interval = 256 * 1024;
    r.max_dumps = 1;
    rule_daemon d({r}, 200ms);
    ASSERT_TRUE(d.serving());
    const std::string started =
        "rule sample-allocs: pid " + std::to_string(jvm.pid()) + " is sampled every 262144 bytes";
    for (int i = 0; i < 300 && d.log().find(started) == std::string::npos; ++i) std::this_thread::sleep_for(100ms);
    ASSERT_NE(d.log().find(started), std::string::npos) << d.log();
    EXPECT_NE(d.log().find("rule sample-allocs: sampling the allocations of pid " + std::to_string(jvm.pid())),
              std::string::npos)
        << d.log();
    ASSERT_TRUE(leaky_grow(trigger));
    json report = d.heapctl({"dump", std::to_string(jvm.pid()), "--wait"});
    ASSERT_TRUE(report.contains("allocation_profile")) << report.dump().substr(0, 2000);
    EXPECT_EQ(report["allocation_profile"]["interval"], 262144);
    const json& suspect = report["leak_suspects"]["suspects"][0];
    ASSERT_TRUE(suspect.contains("allocated_at")) << suspect.dump(1);
    EXPECT_EQ(suspect["allocated_at"][0]["origin"].get<std::string>().rfind("AllocSites.keep(AllocSites.java:", 0), 0u);
    // Started once only (max_dumps 1 counts the starts).
    std::this_thread::sleep_for(2s);
    const std::string log = d.log();
    EXPECT_EQ(log.find(started, log.find(started) + 1), std::string::npos) << log;
}

// A rule's dump of a JVM that takes no attach (-XX:+DisableAttachMechanism) is taken from outside,
// as heapctl dump's is (a core by gdb, converted by the JVM's own jhsdb), and says so.
TEST(rule_watcher, a_rule_dumps_a_jvm_that_takes_no_attach_from_outside) {
    scratch_dir scratch;
    const std::string flag = scratch.file("never");
    demo_jvm jvm(java_main{"OldGenFill"}, {"-XX:+UseSerialGC", "-Xmx64m", "-XX:+DisableAttachMechanism"},
                 {"5", "5", flag, "1000"});
    ASSERT_TRUE(jvm.ready());
    daemon::dump_rule r;
    r.name = "every-1s";
    r.select = only(flag);
    r.every = 1s;
    r.max_dumps = 1;
    r.live = false;
    rule_daemon d({r}, 500ms);
    ASSERT_TRUE(d.serving());
    ASSERT_TRUE(d.wait_for_dumps(jvm.pid(), 1)) << d.log();
    auto jobs = d.dump_jobs(jvm.pid());
    ASSERT_EQ(jobs.size(), 1u) << d.log();
    EXPECT_EQ(jobs[0]["state"], "done") << jobs[0] << d.log();
    json entries = d.heapctl({"dumps"});
    ASSERT_EQ(entries.size(), 1u) << entries;
    EXPECT_EQ(entries[0]["trigger"], "rule:every-1s");
    EXPECT_EQ(entries[0]["has_report"], true);
    const std::string file = entries[0].value("file", "");
    EXPECT_NE(file.find("attach failed: "), std::string::npos) << entries[0];
    EXPECT_NE(file.find("core by gdb, HPROF by jhsdb"), std::string::npos) << entries[0];
    EXPECT_EQ(::kill(jvm.pid(), 0), 0);  // the JVM goes on
}

// What the daemon follows of every JVM, rules or not: `heapctl jvms` shows a JVM's occupancy after
// collections and its trend (a steady one here: OldGenFill holds 30% and collects every 100 ms),
// says why a JVM without hsperfdata is not watched and why a ZGC JVM that refuses attach is not
// measured; the metrics carry the same figure.
TEST(rule_watcher, jvms_and_metrics_show_the_occupancy_after_collections_and_who_is_not_watched) {
    scratch_dir scratch;
    demo_jvm held(java_main{"OldGenFill"}, {"-XX:+UseG1GC", "-Xmx64m"}, {"30", "30", scratch.file("never"), "100"});
    demo_jvm hidden(java_main{"OldGenFill"}, {"-XX:-UsePerfData", "-Xmx64m"}, {"5", "5", scratch.file("never"), "200"});
    // ZGC is measured through attach (GC.heap_info): without attach, nothing measures it. Its
    // collections (System.gc() every 200 ms, polls every 250 ms) run about back to back.
    demo_jvm closed(java_main{"OldGenFill"}, {"-XX:+UseZGC", "-XX:+DisableAttachMechanism", "-Xmx64m"},
                    {"5", "5", scratch.file("never"), "200"});
    ASSERT_TRUE(held.ready() && hidden.ready() && closed.ready());
    rule_daemon d({}, 250ms);
    ASSERT_TRUE(d.serving());

    json held_row, hidden_row, closed_row;
    for (auto deadline = std::chrono::steady_clock::now() + 60s; std::chrono::steady_clock::now() < deadline;) {
        for (const json& j : d.heapctl({"jvms"})) {
            if (j["pid"] == held.pid()) held_row = j;
            if (j["pid"] == hidden.pid()) hidden_row = j;
            if (j["pid"] == closed.pid()) closed_row = j;
        }
        if (held_row.contains("heap_trend") && held_row["heap_trend"].contains("after_gc") &&
            hidden_row.contains("heap_trend") && closed_row.contains("heap_trend") &&
            closed_row["heap_trend"].contains("note"))
            break;
        std::this_thread::sleep_for(250ms);
    }
    ASSERT_TRUE(held_row.contains("heap_trend")) << held_row << "\n" << d.log();
    const json& trend = held_row["heap_trend"];
    EXPECT_EQ(trend["watched"], true) << trend;
    EXPECT_EQ(trend["collector"], "G1") << trend;
    EXPECT_EQ(trend["measured"], "old generation") << trend;
    ASSERT_TRUE(trend.contains("after_gc")) << trend;
    EXPECT_GT(trend["after_gc"]["percent"].get<double>(), 20) << trend;
    EXPECT_LT(trend["after_gc"]["percent"].get<double>(), 45) << trend;
    EXPECT_EQ(trend["after_gc"]["full"], true) << trend;  // System.gc() is a full collection under G1
    EXPECT_EQ(trend["trend"], "learning") << trend;       // a 10-minute window, 5 minutes at least
    EXPECT_EQ(trend["window_seconds"], 600);

    ASSERT_TRUE(hidden_row.contains("heap_trend")) << hidden_row << "\n" << d.log();
    EXPECT_EQ(hidden_row["heap_trend"]["watched"], false);
    EXPECT_NE(hidden_row["heap_trend"]["note"].get<std::string>().find("publishes no hsperfdata"), std::string::npos);
    ASSERT_TRUE(closed_row.contains("heap_trend")) << closed_row << "\n" << d.log();
    EXPECT_EQ(closed_row["heap_trend"]["watched"], true) << closed_row;
    EXPECT_EQ(closed_row["heap_trend"]["collector"], "ZGC") << closed_row;
    EXPECT_FALSE(closed_row["heap_trend"].contains("after_gc")) << closed_row;
    EXPECT_NE(closed_row["heap_trend"].value("note", "").find("measured through attach, which failed"),
              std::string::npos)
        << closed_row;
    const command_result text = d.heapctl_text({"jvms"});
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("unwatched"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("pid " + std::to_string(hidden.pid()) + " is not watched: it publishes no hsperfdata"),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("pid " + std::to_string(closed.pid()) + " is not measured: ZGC's heap"), std::string::npos)
        << text.out;
    EXPECT_NE(d.log().find("watch: pid " + std::to_string(hidden.pid()) + " (OldGenFill) is not watched"),
              std::string::npos)
        << d.log();

    const command_result metrics = d.heapctl_text({"metrics"});
    ASSERT_EQ(metrics.exit_code, 0) << metrics.err;
    const std::string series = "heapd_jvm_after_gc_occupancy_ratio{pid=\"" + std::to_string(held.pid()) + "\"";
    const auto at = metrics.out.find(series);
    ASSERT_NE(at, std::string::npos) << metrics.out;
    const double ratio = std::stod(metrics.out.substr(metrics.out.find("} ", at) + 2));
    EXPECT_GT(ratio, 0.2);
    EXPECT_LT(ratio, 0.45);
}

// The occupancy after collections (formats/hsperf/gc_occupancy.h) of real JVMs of each collector: a
// collection (jcmd GC.run) measures the old generation, or the heap for ZGC and Shenandoah, with
// the cache OldGenFill holds (about 30% of it) in it; ZGC's with the figure GC.heap_info gives.
TEST(rule_watcher, occupancy_after_collections_of_real_jvms_of_each_collector) {
    scratch_dir scratch;
    const std::pair<const char*, collector_family> collectors[] = {
        {"-XX:+UseSerialGC", collector_family::serial},
        {"-XX:+UseParallelGC", collector_family::parallel},
        {"-XX:+UseG1GC", collector_family::g1},
        {"-XX:+UseZGC", collector_family::z},
        {"-XX:+UseShenandoahGC", collector_family::shenandoah}};
    for (auto [gc, family] : collectors) {
        SCOPED_TRACE(gc);
        demo_jvm jvm(java_main{"OldGenFill"}, {gc, "-Xmx64m"}, {"30", "30", scratch.file("never"), "3600000"});
        ASSERT_TRUE(jvm.ready());
        occupancy_tracker t;
        auto before = daemon::find_jvm_facts(jvm.pid());
        ASSERT_TRUE(before && before->summary);
        EXPECT_FALSE(t.feed(*before->summary, 0));
        EXPECT_EQ(t.family(), family);
        ASSERT_EQ(jvm.jcmd({"GC.run"}).exit_code, 0);
        auto after = daemon::find_jvm_facts(jvm.pid());
        ASSERT_TRUE(after && after->summary);
        // ZGC's figure comes from GC.heap_info, as the daemon asks it (rule_watcher.h).
        std::optional<std::int64_t> heap_info;
        if (family == collector_family::z) {
            heap_info = zgc_heap_used(jvm.jcmd({"GC.heap_info"}).out);
            ASSERT_TRUE(heap_info);
            EXPECT_FALSE(t.feed(*after->summary, 1));  // without it, nothing
        }
        auto m = t.feed(*after->summary, 1, heap_info);
        ASSERT_TRUE(m);
        EXPECT_GE(m->collections, 1);
        EXPECT_EQ(m->full, family == collector_family::serial || family == collector_family::parallel ||
                               family == collector_family::g1);
        // OldGenFill filled the old generation (the heap without generations) to 30% of it.
        EXPECT_GT(m->percent(), 20) << m->used << " of " << m->max;
        EXPECT_LT(m->percent(), 60) << m->used << " of " << m->max;
    }
}

}  // namespace
}  // namespace heapd::test
