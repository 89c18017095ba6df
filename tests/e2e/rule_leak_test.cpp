// Dump rules against slow leaks, under each collector of JDK 17 (G1, Parallel, Serial, ZGC,
// Shenandoah): a real daemon (tests/support/rule_daemon.h) watches a JVM that leaks 64 KiB arrays
// into a static list until OutOfMemoryError (about 50 s) and a JVM with a large cache filled once.
// The occupancy rule (old generation, or heap, 60% full after collections twice in a row) dumps
// the leaking JVM once before its error, and the report's first suspect is the leaking static; the
// predicting rule (full within 30 s by the trend of the last 10 s) dumps it earlier; neither
// touches the cache.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <sstream>
#include <thread>

#include "daemon/rules/rule_match.h"
#include "support/jvm_process.h"
#include "support/oom_scenario.h"
#include "support/rule_daemon.h"

namespace heapd::test {
namespace {

using namespace std::chrono_literals;
using wire::json;

// SlowLeak JVMs tagged with tag only (other tests run JVMs too).
daemon::jvm_selector slow_leaks(const std::string& tag) { return selector("SlowLeak", " " + regex_quote(tag) + "$"); }

// When the leaking JVM ran out of memory (ms since the epoch, from its "oom MILLIS" line), waiting
// at most 180 s; 0 when it did not.
std::int64_t wait_for_oom(const std::string& out) {
    for (auto deadline = std::chrono::steady_clock::now() + 180s; std::chrono::steady_clock::now() < deadline;) {
        const std::string text = file_text(out);
        if (auto at = text.find("oom "); at != std::string::npos && text.find('\n', at) != std::string::npos)
            return std::stoll(text.substr(at + 4));
        std::this_thread::sleep_for(250ms);
    }
    return 0;
}

class rule_leak : public testing::TestWithParam<const char*> {};

TEST_P(rule_leak, the_rules_dump_a_leaking_jvm_before_its_error_and_the_predicting_one_first) {
    scratch_dir scratch;
    const std::string tag = "tag-" + scratch.path();
    const std::string gc = GetParam();
    // 1 MiB leaked a second into 64 MiB, 8 MiB a second of garbage besides; the cache JVM holds 40%.
    demo_jvm leak(java_main{"SlowLeak"}, {gc, "-Xmx64m"}, {"leak", "1024", "8192", "0", tag}, scratch.file("leak.out"));
    demo_jvm cache(java_main{"SlowLeak"}, {gc, "-Xmx64m"}, {"cache", "0", "8192", "40", tag});
    ASSERT_TRUE(leak.ready() && cache.ready());

    daemon::dump_rule occupancy;
    occupancy.name = "old-60";
    occupancy.select = slow_leaks(tag);
    occupancy.old_gen_percent = 60;
    occupancy.old_gen_collections = 2;
    occupancy.cooldown = 1h;
    daemon::dump_rule predict;
    predict.name = "leak-coming";
    predict.select = slow_leaks(tag);
    predict.predict_full_within = 30s;
    predict.predict_window = 10s;
    predict.cooldown = 1h;
    rule_daemon d({occupancy, predict}, 250ms);
    ASSERT_TRUE(d.serving());

    const std::int64_t oom_ms = wait_for_oom(scratch.file("leak.out"));
    ASSERT_GT(oom_ms, 0) << "the leaking JVM did not run out of memory\n" << d.log();
    ASSERT_TRUE(d.wait_for_dumps(leak.pid(), 2)) << d.log();
    auto jobs = d.dump_jobs(leak.pid());
    // One dump per rule (the cooldown holds each back while its condition keeps holding).
    ASSERT_EQ(jobs.size(), 2u) << d.log();
    EXPECT_EQ(jobs[0]["trigger"], "rule:leak-coming") << d.log();
    EXPECT_EQ(jobs[1]["trigger"], "rule:old-60") << d.log();
    for (const json& j : jobs) {
        EXPECT_EQ(j["state"], "done") << j;
        // Written before the JVM ran out of memory.
        EXPECT_LT(j["finished_ms"].get<std::int64_t>(), oom_ms) << j;
    }
    EXPECT_LT(jobs[0]["created_ms"].get<std::int64_t>(), jobs[1]["created_ms"].get<std::int64_t>());
    // The cache JVM does not leak. Under Shenandoah the predicting rule may still take it for a leak
    // in this test's 10 s window (a known limit, docs/rules.md): said, not failed, for that collector.
    if (gc != "-XX:+UseShenandoahGC")
        EXPECT_TRUE(d.dump_jobs(cache.pid()).empty()) << d.log();
    else if (!d.dump_jobs(cache.pid()).empty())
        std::cout << "Shenandoah: the cache JVM was dumped too (the predicting rule's known limit)\n";

    // The report of the occupancy rule's dump: the leaking static holds the first suspect.
    std::string entry;
    for (const json& m : d.heapctl({"dumps"}))
        if (m["trigger"] == "rule:old-60") entry = m["id"];
    ASSERT_FALSE(entry.empty());
    json report = d.heapctl({"report", entry});
    const json& suspects = report["leak_suspects"]["suspects"];
    ASSERT_FALSE(suspects.empty()) << report.dump().substr(0, 3000);
    const std::string first = suspects[0].dump();
    EXPECT_NE(first.find("SlowLeak"), std::string::npos) << first;
    EXPECT_NE(first.find("LEAKED"), std::string::npos) << first;

    const std::string log = d.log();
    // What the rules said, for the record of the run.
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);)
        if (line.find("] rule ") != std::string::npos) std::cout << line << "\n";
    std::cout << "out of memory at " << oom_ms << " ms; dumps finished at " << jobs[0]["finished_ms"] << " and "
              << jobs[1]["finished_ms"] << "\n";
    EXPECT_NE(log.find("rule leak-coming: dumping pid " + std::to_string(leak.pid()) + " (SlowLeak) as job "),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("full after collections, 2 measurements in a row (threshold 60%)"), std::string::npos) << log;
}

INSTANTIATE_TEST_SUITE_P(collectors, rule_leak,
                         testing::Values("-XX:+UseG1GC", "-XX:+UseParallelGC", "-XX:+UseSerialGC", "-XX:+UseZGC",
                                         "-XX:+UseShenandoahGC"),
                         [](const testing::TestParamInfo<const char*>& p) {
                             std::string name = std::string(p.param).substr(8);  // after "-XX:+Use"
                             return name.substr(0, name.size() - 2);             // without "GC"
                         });

}  // namespace
}  // namespace heapd::test
