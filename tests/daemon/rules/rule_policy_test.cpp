// Dump rules' decisions from synthetic samples: the schedule, old-generation occupancy after
// collections in a row, the prediction of a full heap, GC time share over a window, resident memory
// against its limit, cooldown, cap, busy and refused
// dumps, a pid reused by a new JVM, forgotten JVMs and rules, and the bounded window.
#include "daemon/rules/rule_policy.h"

#include <gtest/gtest.h>

#include "daemon/config/config_values.h"

namespace heapd::daemon {
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t hz = 1'000'000'000;  // hrt ticks per second, as on Linux
const jvm_identity jvm{4242, 777};
const policy_clock::time_point t0{};

// A JVM's counters at a second of its life, GC seconds so far; no collection measured.
jvm_sample at(double second, double gc_seconds = 0) {
    jvm_sample s;
    s.at = t0 + std::chrono::duration_cast<policy_clock::duration>(std::chrono::duration<double>(second));
    s.collector = collector_family::g1;
    s.hrt_frequency = hz;
    s.hrt_ticks = static_cast<std::int64_t>(second * hz);
    s.gc_ticks = static_cast<std::int64_t>(gc_seconds * hz);
    return s;
}

// The same with collections that left the old generation used_mib of 100 MiB full.
jvm_sample measured(double second, std::int64_t used_mib, double gc_seconds = 0) {
    jvm_sample s = at(second, gc_seconds);
    after_collection m;
    m.at = second;
    m.used = used_mib << 20;
    m.max = 100 << 20;
    m.collections = 1;
    s.measured = m;
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

TEST(rule_policy, old_generation_above_the_threshold_after_collections_in_a_row) {
    dump_rule r = rule("full-old");
    r.old_gen_percent = 90;
    r.old_gen_collections = 3;
    rule_policy p;
    EXPECT_FALSE(p.observe(r, jvm, at(0)));
    EXPECT_FALSE(p.observe(r, jvm, measured(1, 95)));  // 1 in a row
    EXPECT_FALSE(p.observe(r, jvm, at(2)));            // nothing measured
    EXPECT_FALSE(p.observe(r, jvm, measured(3, 92)));  // 2
    auto due = p.observe(r, jvm, measured(4, 93));
    ASSERT_TRUE(due);
    EXPECT_EQ(*due, "old generation 93% full after collections, 3 measurements in a row (threshold 90%)");
    // ZGC and Shenandoah measure the heap.
    jvm_sample z = measured(5, 94);
    z.collector = collector_family::z;
    due = p.observe(r, jvm, z);
    ASSERT_TRUE(due);
    EXPECT_EQ(*due, "heap 94% full after collections, 4 measurements in a row (threshold 90%)");
}

TEST(rule_policy, occupancy_at_or_below_the_threshold_starts_the_count_again) {
    dump_rule r = rule("flap");
    r.old_gen_percent = 90;
    r.old_gen_collections = 2;
    rule_policy p;
    p.observe(r, jvm, at(0));
    // A flapping JVM: above, below, above, exactly at, above...
    EXPECT_FALSE(p.observe(r, jvm, measured(1, 95)));
    EXPECT_FALSE(p.observe(r, jvm, measured(2, 60)));
    EXPECT_FALSE(p.observe(r, jvm, measured(3, 95)));
    EXPECT_FALSE(p.observe(r, jvm, measured(4, 90)));
    EXPECT_FALSE(p.observe(r, jvm, measured(5, 95)));
    EXPECT_TRUE(p.observe(r, jvm, measured(6, 96)));
}

TEST(rule_policy, a_dump_starts_the_old_generation_count_again) {
    dump_rule r = rule("old");
    r.old_gen_percent = 80;
    r.old_gen_collections = 2;
    rule_policy p;
    p.observe(r, jvm, at(0));
    p.observe(r, jvm, measured(1, 90));
    ASSERT_TRUE(p.observe(r, jvm, measured(2, 90)));
    p.record("old", jvm, dump_outcome::submitted, at(2).at);
    EXPECT_FALSE(p.observe(r, jvm, measured(3, 90)));
    EXPECT_TRUE(p.observe(r, jvm, measured(4, 90)));
}

TEST(rule_policy, cooldown_and_cap_hold_back_a_condition_that_keeps_holding) {
    dump_rule r = rule("full-old");
    r.old_gen_percent = 50;
    r.cooldown = 600s;
    r.max_dumps = 2;
    rule_policy p;
    p.observe(r, jvm, at(0));
    int asked = 0;
    std::vector<double> when;
    // A collection every second for two hours, always 90% full.
    for (int second = 1; second <= 7200; ++second) {
        jvm_sample s = measured(second, 90);
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
        auto due = p.observe(r, jvm, at(s, gc));
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
        EXPECT_FALSE(p.observe(r, jvm, at(s, gc))) << s;
    }
    // The death spiral: 62% of the time in GC from 600 s on, noticed once a minute of it is seen
    // (the window still holding calm samples stays below 60%).
    int first = 0;
    for (int s = 605; s <= 900 && first == 0; s += 5) {
        gc += 5 * 0.62;
        if (auto due = p.observe(r, jvm, at(s, gc))) {
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
    EXPECT_FALSE(p.observe(r, jvm, at(0, 0)));
    EXPECT_FALSE(p.observe(r, jvm, at(0.5, 0.4)));
    EXPECT_FALSE(p.observe(r, jvm, at(1, 0.4)));
    // From 1 s to 5 s: 3.6 s of GC in 4 s.
    auto due = p.observe(r, jvm, at(5, 4));
    ASSERT_TRUE(due);
    EXPECT_EQ(*due, "GC took 90% of the last 4s (threshold 50%)");
    // A collection counted before the JVM's clock caught up: at most 100%.
    due = p.observe(r, jvm, at(8, 8));
    ASSERT_TRUE(due);
    EXPECT_EQ(*due, "GC took 100% of the last 3s (threshold 50%)");
}

TEST(rule_policy, gc_time_share_without_the_jvm_clock_measures_nothing) {
    dump_rule r = rule("spiral");
    r.gc_time_percent = 10;
    r.gc_window = 1s;
    rule_policy p;
    for (int s = 0; s < 10; ++s) {
        jvm_sample x = at(s, s);
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
        last = p.observe(r, jvm, at(s, gc));
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
    p.observe(r, jvm, at(0, 0));
    auto due = p.observe(r, jvm, measured(10, 90, 9));
    ASSERT_TRUE(due);
    EXPECT_EQ(*due,
              "scheduled every 10s; old generation 90% full after collections, 1 measurement in a row "
              "(threshold 50%); GC took 90% of the last 10s (threshold 50%)");
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

TEST(rule_policy, a_heap_predicted_full_within_the_bound_asks_for_a_dump) {
    dump_rule r = rule("leak");
    r.predict_full_within = 60s;
    r.predict_window = 40s;
    rule_policy p;
    heap_trend trend;
    std::optional<std::string> due;
    double when = 0;
    // A floor rising 1 MiB/s from 10 MiB of 100, measured every 2 s: full at about 90 s.
    for (int second = 0; second <= 80 && !due; second += 2) {
        jvm_sample s = measured(second, 10 + second);
        trend.add(*s.measured, 600);
        s.trend = &trend;
        due = p.observe(r, jvm, s);
        when = second;
    }
    ASSERT_TRUE(due);
    // Learning for the first 20 s (half the window); then about 70 s to full, above the bound,
    // until about 30 s.
    EXPECT_GE(when, 28);
    EXPECT_LE(when, 34);
    EXPECT_NE(due->find("old generation full in about 1m"), std::string::npos) << *due;
    EXPECT_NE(due->find("rose steadily over 30s to 40%"), std::string::npos) << *due;
    EXPECT_NE(due->find("60.0 MiB/min (threshold 1m)"), std::string::npos) << *due;
    // A steady heap never does.
    rule_policy q;
    heap_trend flat;
    for (int second = 0; second <= 600; second += 2) {
        jvm_sample s = measured(second, 70 + second % 7);
        flat.add(*s.measured, 600);
        s.trend = &flat;
        EXPECT_FALSE(q.observe(r, jvm, s)) << second;
    }
}

// A poll of a JVM whose process holds resident_mib of a 400 MiB cgroup limit.
jvm_sample resident(double second, std::int64_t resident_mib) {
    jvm_sample s = at(second);
    s.resident = resident_mib << 20;
    s.memory_limit = std::int64_t{400} << 20;
    s.limit_source = "cgroup v1 /shop";
    return s;
}

TEST(rule_policy, resident_memory_above_its_share_of_the_limit_in_a_row) {
    dump_rule r = rule("rss");
    r.memory_percent = 80;
    r.memory_polls = 2;
    rule_policy p;
    EXPECT_FALSE(p.observe(r, jvm, resident(1, 280)));  // 70%
    EXPECT_FALSE(p.observe(r, jvm, resident(2, 352)));  // 88%: one poll
    EXPECT_FALSE(p.observe(r, jvm, resident(3, 320)));  // 80%: not above, the count starts again
    EXPECT_FALSE(p.observe(r, jvm, resident(4, 340)));  // 85%: one poll
    auto due = p.observe(r, jvm, resident(5, 352));     // 88%: two in a row
    ASSERT_TRUE(due);
    EXPECT_EQ(*due,
              "resident memory 88% of its limit (352 MiB of 400 MiB, cgroup v1 /shop), 2 polls in a row (threshold "
              "80%)");
    // A dump starts the count again.
    p.record("rss", jvm, dump_outcome::submitted, resident(5, 352).at);
    EXPECT_FALSE(p.observe(r, jvm, resident(6, 352)));
    EXPECT_TRUE(p.observe(r, jvm, resident(7, 352)));
}

TEST(rule_policy, a_steady_share_below_the_threshold_never_dumps_and_no_reading_measures_nothing) {
    dump_rule r = rule("rss");
    r.memory_percent = 80;
    r.memory_polls = 1;
    rule_policy p;
    for (int second = 1; second < 1000; ++second) EXPECT_FALSE(p.observe(r, jvm, resident(second, 280)));  // 70%
    EXPECT_FALSE(p.observe(r, jvm, at(1000)));  // the process could not be read: nothing
    jvm_sample no_limit = resident(1001, 390);
    no_limit.memory_limit.reset();
    EXPECT_FALSE(p.observe(r, jvm, no_limit));
}

// Resident memory rising 2 MiB/s from 100 MiB of a 400 MiB limit, read every second: at the limit
// after 150 s. The trend (the heap trend's rules over memory_window) says so once the window is half
// full, and the rule asks for a dump once the limit is within its bound; memory that holds a steady
// 70% with noise never does.
TEST(rule_policy, resident_memory_predicted_at_its_limit_within_the_bound_asks_for_a_dump) {
    dump_rule r = rule("rss-trend");
    r.memory_full_within = 120s;
    r.memory_window = 20s;
    rule_policy p;
    heap_trend trend;
    std::optional<std::string> due;
    int when = 0;
    for (int second = 0; second <= 150 && !due; ++second) {
        jvm_sample s = resident(second, 100 + 2 * second);
        trend.add({static_cast<double>(second), *s.resident, *s.memory_limit, 1}, 20);
        s.memory_trend = &trend;
        due = p.observe(r, jvm, s);
        when = second;
    }
    ASSERT_TRUE(due);
    // Learning for the first 10 s; then 140 s to the limit, above the bound, until 30 s.
    EXPECT_GE(when, 29);
    EXPECT_LE(when, 32);
    EXPECT_NE(due->find("resident memory at its limit (400 MiB, cgroup v1 /shop) in about 2m"), std::string::npos)
        << *due;
    EXPECT_NE(due->find("120 MiB/min (threshold 2m)"), std::string::npos) << *due;

    rule_policy q;
    heap_trend flat;
    for (int second = 0; second <= 600; ++second) {
        jvm_sample s = resident(second, 280 + second % 9);
        flat.add({static_cast<double>(second), *s.resident, *s.memory_limit, 1}, 20);
        s.memory_trend = &flat;
        EXPECT_FALSE(q.observe(r, jvm, s)) << second;
    }
}

TEST(rule_policy, byte_rate_words) {
    EXPECT_EQ(byte_rate_words(1 << 20), "60.0 MiB/min");
    EXPECT_EQ(byte_rate_words(1024.0 / 60), "1.00 KiB/min");
    EXPECT_EQ(byte_rate_words(-5), "0 B/min");
}

TEST(rule_policy, durations_in_reasons) {
    EXPECT_EQ(duration_string(6h), "6h");
    EXPECT_EQ(duration_string(90min), "1h30m");
    EXPECT_EQ(duration_string(45s), "45s");
    EXPECT_EQ(duration_string(std::chrono::seconds(2 * 86400 + 5)), "2d5s");
    EXPECT_EQ(duration_string(0s), "0s");
}

}  // namespace
}  // namespace heapd::daemon
