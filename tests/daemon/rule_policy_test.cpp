// Dump rules' decisions from synthetic samples: the schedule, old-generation occupancy after old
// collections in a row, GC time share over a window, cooldown, cap, busy and refused dumps, a pid
// reused by a new JVM, forgotten JVMs and rules, and the bounded window.
#include "daemon/rule_policy.h"

#include <gtest/gtest.h>

namespace heapd::daemon {
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t hz = 1'000'000'000;  // hrt ticks per second, as on Linux
const jvm_identity jvm{4242, 777};
const policy_clock::time_point t0{};

// A JVM's counters at a second of its life: old used / max in MiB, old collections, GC seconds.
jvm_sample at(double second, std::int64_t old_used = 10, std::int64_t old_collections = 0, double gc_seconds = 0) {
    jvm_sample s;
    s.at = t0 + std::chrono::duration_cast<policy_clock::duration>(std::chrono::duration<double>(second));
    s.old_gen = hsperf_heap_usage{old_used << 20, 100 << 20, 100 << 20};
    s.old_collections = old_collections;
    s.hrt_frequency = hz;
    s.hrt_ticks = static_cast<std::int64_t>(second * hz);
    s.gc_ticks = static_cast<std::int64_t>(gc_seconds * hz);
    return s;
}

dump_rule rule(const char* name) {
    dump_rule r;
    r.name = name;
    r.cooldown = 0s;
    r.max_dumps = 0;
    return r;
}

TEST(rule_policy, schedule_dumps_one_interval_after_first_seen_then_after_each_dump) {
    dump_rule r = rule("nightly");
    r.every = 6h;
    rule_policy p;
    EXPECT_FALSE(p.observe(r, jvm, at(100)));
    EXPECT_FALSE(p.observe(r, jvm, at(100 + 6 * 3600 - 1)));
    auto due = p.observe(r, jvm, at(100 + 6 * 3600));
    ASSERT_TRUE(due);
    EXPECT_EQ(*due, "scheduled every 6h");
    // Busy: nothing happened, so it is still due.
    p.record("nightly", jvm, dump_outcome::busy, at(100 + 6 * 3600).at);
    ASSERT_TRUE(p.observe(r, jvm, at(100 + 6 * 3600 + 5)));
    p.record("nightly", jvm, dump_outcome::submitted, at(100 + 6 * 3600 + 5).at);
    EXPECT_EQ(p.dumps("nightly", jvm), 1u);
    EXPECT_FALSE(p.observe(r, jvm, at(100 + 6 * 3600 + 10)));
    EXPECT_FALSE(p.observe(r, jvm, at(100 + 12 * 3600 + 4)));
    EXPECT_TRUE(p.observe(r, jvm, at(100 + 12 * 3600 + 5)));
}

TEST(rule_policy, a_refused_dump_starts_the_cooldown_but_neither_the_schedule_nor_the_count) {
    dump_rule r = rule("s");
    r.every = 10s;
    r.cooldown = 60s;
    rule_policy p;
    p.observe(r, jvm, at(0));
    ASSERT_TRUE(p.observe(r, jvm, at(10)));
    p.record("s", jvm, dump_outcome::refused, at(10).at);
    EXPECT_EQ(p.dumps("s", jvm), 0u);
    EXPECT_FALSE(p.observe(r, jvm, at(20)));
    EXPECT_FALSE(p.observe(r, jvm, at(69)));
    // Still due (the schedule did not move), and the cooldown is over.
    EXPECT_TRUE(p.observe(r, jvm, at(70)));
}

TEST(rule_policy, old_generation_above_the_threshold_after_old_collections_in_a_row) {
    dump_rule r = rule("full-old");
    r.old_gen_percent = 90;
    r.old_gen_collections = 3;
    rule_policy p;
    // The first sample only sets the count of old collections, however full.
    EXPECT_FALSE(p.observe(r, jvm, at(0, 95, 7)));
    EXPECT_FALSE(p.observe(r, jvm, at(1, 95, 8)));   // 1 in a row
    EXPECT_FALSE(p.observe(r, jvm, at(2, 99, 8)));   // no old collection: not a measurement
    EXPECT_FALSE(p.observe(r, jvm, at(3, 92, 11)));  // 2 (three collections, one measurement)
    auto due = p.observe(r, jvm, at(4, 93, 12));
    ASSERT_TRUE(due);
    EXPECT_EQ(*due, "old generation 93% full after 3 old collections in a row (threshold 90%)");
}

TEST(rule_policy, occupancy_at_or_below_the_threshold_starts_the_count_again) {
    dump_rule r = rule("flap");
    r.old_gen_percent = 90;
    r.old_gen_collections = 2;
    rule_policy p;
    p.observe(r, jvm, at(0, 50, 0));
    // A flapping JVM: above, below, above, exactly at, above...
    EXPECT_FALSE(p.observe(r, jvm, at(1, 95, 1)));
    EXPECT_FALSE(p.observe(r, jvm, at(2, 60, 2)));
    EXPECT_FALSE(p.observe(r, jvm, at(3, 95, 3)));
    EXPECT_FALSE(p.observe(r, jvm, at(4, 90, 4)));
    EXPECT_FALSE(p.observe(r, jvm, at(5, 95, 5)));
    EXPECT_TRUE(p.observe(r, jvm, at(6, 96, 6)));
}

TEST(rule_policy, a_dump_starts_the_old_generation_count_again) {
    dump_rule r = rule("old");
    r.old_gen_percent = 80;
    r.old_gen_collections = 2;
    rule_policy p;
    p.observe(r, jvm, at(0, 90, 0));
    p.observe(r, jvm, at(1, 90, 1));
    ASSERT_TRUE(p.observe(r, jvm, at(2, 90, 2)));
    p.record("old", jvm, dump_outcome::submitted, at(2).at);
    EXPECT_FALSE(p.observe(r, jvm, at(3, 90, 3)));
    EXPECT_TRUE(p.observe(r, jvm, at(4, 90, 4)));
}

TEST(rule_policy, cooldown_and_cap_hold_back_a_condition_that_keeps_holding) {
    dump_rule r = rule("full-old");
    r.old_gen_percent = 50;
    r.cooldown = 600s;
    r.max_dumps = 2;
    rule_policy p;
    p.observe(r, jvm, at(0, 90, 0));
    int asked = 0;
    std::vector<double> when;
    // An old collection every second for two hours, always 90% full.
    for (int second = 1; second <= 7200; ++second) {
        jvm_sample s = at(second, 90, second);
        if (p.observe(r, jvm, s)) {
            ++asked;
            when.push_back(second);
            p.record("full-old", jvm, dump_outcome::submitted, s.at);
        }
    }
    EXPECT_EQ(asked, 2);
    EXPECT_EQ(p.dumps("full-old", jvm), 2u);
    ASSERT_EQ(when.size(), 2u);
    EXPECT_EQ(when[0], 1);
    EXPECT_EQ(when[1], 601);  // the cooldown after the first, then a fresh measurement
}

TEST(rule_policy, no_cap_when_max_dumps_is_zero) {
    dump_rule r = rule("every");
    r.every = 1s;
    rule_policy p;
    p.observe(r, jvm, at(0));
    int asked = 0;
    for (int second = 1; second <= 20; ++second)
        if (p.observe(r, jvm, at(second))) {
            ++asked;
            p.record("every", jvm, dump_outcome::submitted, at(second).at);
        }
    EXPECT_EQ(asked, 20);
}

TEST(rule_policy, gc_time_share_over_a_window_of_at_least_gc_window) {
    dump_rule r = rule("spiral");
    r.gc_time_percent = 60;
    r.gc_window = 60s;
    rule_policy p;
    // A busy start (80% GC for a minute), then calm: the share since the start stays high for a
    // while, but the window of the last minute does not.
    double gc = 0;
    for (int s = 0; s <= 60; s += 5) {
        auto due = p.observe(r, jvm, at(s, 10, 0, gc));
        if (s == 60) {
            ASSERT_TRUE(due) << s;
            EXPECT_EQ(*due, "GC took 80% of the last 1m (threshold 60%)");
        } else {
            EXPECT_FALSE(due) << "the window does not span a minute yet at " << s;
        }
        gc += 5 * 0.8;
    }
    gc -= 5 * 0.8;
    p.record("spiral", jvm, dump_outcome::submitted, at(60).at);
    for (int s = 65; s <= 600; s += 5) {
        gc += 5 * 0.1;
        EXPECT_FALSE(p.observe(r, jvm, at(s, 10, 0, gc))) << s;
    }
    // The death spiral: 62% of the time in GC from 600 s on, noticed once a minute of it is seen
    // (the window still holding calm samples stays below 60%).
    int first = 0;
    for (int s = 605; s <= 900 && first == 0; s += 5) {
        gc += 5 * 0.62;
        if (auto due = p.observe(r, jvm, at(s, 10, 0, gc))) {
            first = s;
            EXPECT_EQ(*due, "GC took 62% of the last 1m (threshold 60%)");
        }
    }
    EXPECT_EQ(first, 660);
}

TEST(rule_policy, the_window_starts_at_the_latest_sample_at_least_gc_window_old) {
    dump_rule r = rule("spiral");
    r.gc_time_percent = 50;
    r.gc_window = 3s;
    rule_policy p;
    EXPECT_FALSE(p.observe(r, jvm, at(0, 10, 0, 0)));
    EXPECT_FALSE(p.observe(r, jvm, at(0.5, 10, 0, 0.4)));
    EXPECT_FALSE(p.observe(r, jvm, at(1, 10, 0, 0.4)));
    // From 1 s to 5 s: 3.6 s of GC in 4 s.
    auto due = p.observe(r, jvm, at(5, 10, 0, 4));
    ASSERT_TRUE(due);
    EXPECT_EQ(*due, "GC took 90% of the last 4s (threshold 50%)");
    // A collection counted before the JVM's clock caught up: at most 100%.
    due = p.observe(r, jvm, at(8, 10, 0, 8));
    ASSERT_TRUE(due);
    EXPECT_EQ(*due, "GC took 100% of the last 3s (threshold 50%)");
}

TEST(rule_policy, gc_time_share_without_the_jvm_clock_measures_nothing) {
    dump_rule r = rule("spiral");
    r.gc_time_percent = 10;
    r.gc_window = 1s;
    rule_policy p;
    for (int s = 0; s < 10; ++s) {
        jvm_sample x = at(s, 10, 0, s);
        x.hrt_frequency = 0;
        EXPECT_FALSE(p.observe(r, jvm, x));
    }
}

TEST(rule_policy, the_window_stays_bounded_and_still_spans_gc_window) {
    dump_rule r = rule("spiral");
    r.gc_time_percent = 50;
    r.gc_window = 3600s;
    rule_policy p;
    // A sample every 100 ms for an hour and a half, 40% GC, then 90% GC for the last 40 minutes.
    std::optional<std::string> last;
    double gc = 0;
    for (int i = 0; i <= 54000; ++i) {
        const double s = i / 10.0;
        gc += 0.1 * (s > 3000 ? 0.9 : 0.4);
        last = p.observe(r, jvm, at(s, 10, 0, gc));
        ASSERT_LE(p.window_samples(), rule_policy::max_window_samples);
    }
    // Over the last hour: 20 minutes at 40% and 40 at 90%: about 73%.
    ASSERT_TRUE(last);
    EXPECT_NE(last->find("GC took 73"), std::string::npos) << *last;
    // Spanning an hour and at most a little more: "1h" or "1hNs" with N seconds, never minutes.
    EXPECT_NE(last->find("of the last 1h"), std::string::npos) << *last;
    EXPECT_EQ(last->find("m (threshold"), std::string::npos) << *last;
}

TEST(rule_policy, every_condition_that_holds_is_in_the_reason) {
    dump_rule r = rule("all");
    r.every = 10s;
    r.old_gen_percent = 50;
    r.gc_time_percent = 50;
    r.gc_window = 5s;
    rule_policy p;
    p.observe(r, jvm, at(0, 90, 0, 0));
    auto due = p.observe(r, jvm, at(10, 90, 1, 9));
    ASSERT_TRUE(due);
    EXPECT_EQ(*due, "scheduled every 10s; old generation 90% full after 1 old collection in a row (threshold 50%); "
                    "GC took 90% of the last 10s (threshold 50%)");
}

TEST(rule_policy, a_new_jvm_with_the_same_pid_starts_afresh_and_gone_jvms_are_forgotten) {
    dump_rule r = rule("s");
    r.every = 10s;
    r.max_dumps = 1;
    rule_policy p;
    p.observe(r, jvm, at(0));
    ASSERT_TRUE(p.observe(r, jvm, at(10)));
    p.record("s", jvm, dump_outcome::submitted, at(10).at);
    EXPECT_FALSE(p.observe(r, jvm, at(100)));  // capped

    // The JVM restarts and gets the same pid: another process start time, another JVM.
    const jvm_identity again{jvm.pid, jvm.start_time + 5000};
    EXPECT_FALSE(p.observe(r, again, at(101)));
    EXPECT_EQ(p.dumps("s", again), 0u);
    EXPECT_FALSE(p.observe(r, again, at(110)));
    EXPECT_TRUE(p.observe(r, again, at(111)));
    EXPECT_EQ(p.tracked(), 2u);
    p.retain_jvms({again});
    EXPECT_EQ(p.tracked(), 1u);
    EXPECT_EQ(p.dumps("s", jvm), 0u);
}

TEST(rule_policy, state_of_rules_that_remain_is_kept) {
    dump_rule a = rule("a"), b = rule("b");
    a.every = b.every = 10s;
    rule_policy p;
    p.observe(a, jvm, at(0));
    p.observe(b, jvm, at(0));
    p.record("a", jvm, dump_outcome::submitted, at(0).at);
    p.record("b", jvm, dump_outcome::submitted, at(0).at);
    p.retain_rules({a});
    EXPECT_EQ(p.dumps("a", jvm), 1u);
    EXPECT_EQ(p.dumps("b", jvm), 0u);
    EXPECT_EQ(p.tracked(), 1u);
    // b comes back: it first sees the JVM now.
    EXPECT_FALSE(p.observe(b, jvm, at(5)));
    EXPECT_FALSE(p.observe(b, jvm, at(14)));
    EXPECT_TRUE(p.observe(b, jvm, at(15)));
}

TEST(rule_policy, old_collections_are_collector_one_or_all_without_it) {
    jvm_perf_summary serial;
    serial.collectors = {{0, "Serial young collection pauses", 40, 0, 0},
                         {1, "Serial full collection pauses", 3, 0, 0}};
    EXPECT_EQ(old_collections(serial), 3);
    jvm_perf_summary g1;
    g1.collectors = {{0, "G1 young collection pauses", 40, 0, 0},
                     {1, "G1 full collection pauses", 2, 0, 0},
                     {2, "G1 concurrent cycle pauses", 9, 0, 0}};
    EXPECT_EQ(old_collections(g1), 2);
    jvm_perf_summary z;
    z.collectors = {{2, "Z concurrent cycle pauses", 5, 0, 0}};
    EXPECT_EQ(old_collections(z), 5);
}

TEST(rule_policy, sample_of_a_summary) {
    jvm_perf_summary s;
    s.old_gen = hsperf_heap_usage{30, 40, 100};
    s.collectors = {{1, "full", 4, 0, 0}};
    s.gc_ticks = 123;
    s.hrt_ticks = 456;
    s.hrt_frequency = 1000;
    jvm_sample x = sample_of(s, t0 + 5s);
    EXPECT_EQ(x.at, t0 + 5s);
    ASSERT_TRUE(x.old_gen);
    EXPECT_DOUBLE_EQ(*x.old_gen->occupancy(), 0.3);
    EXPECT_EQ(x.old_collections, 4);
    EXPECT_EQ(x.gc_ticks, 123);
    EXPECT_EQ(x.hrt_ticks, 456);
    EXPECT_EQ(x.hrt_frequency, 1000);
}

TEST(rule_policy, duration_words) {
    EXPECT_EQ(duration_words(6h), "6h");
    EXPECT_EQ(duration_words(90min), "1h30m");
    EXPECT_EQ(duration_words(45s), "45s");
    EXPECT_EQ(duration_words(std::chrono::seconds(2 * 86400 + 5)), "2d5s");
    EXPECT_EQ(duration_words(0s), "0s");
}

} // namespace
} // namespace heapd::daemon
