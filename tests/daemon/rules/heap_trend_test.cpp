// The heap trend from synthetic measurements: a steady leak is predicted full at the right time; a
// sawtooth, a step (a cache filled once), noise around a stable level and too few or too recent
// measurements are not; the bounded store keeps its span.
#include "daemon/rules/heap_trend.h"

#include <gtest/gtest.h>

#include <cmath>

namespace heapd::daemon {
namespace {

constexpr std::int64_t mib = 1 << 20;

after_collection at(double second, double used_mib) {
    after_collection m;
    m.at = second;
    m.used = static_cast<std::int64_t>(used_mib * mib);
    m.max = 100 * mib;
    m.collections = 1;
    return m;
}

TEST(heap_trend, a_steady_leak_is_predicted_full_when_its_floor_reaches_the_maximum) {
    heap_trend t;
    // 20 MiB, growing 1 MiB/s, measured every 2 s, with garbage of up to 3 MiB on top.
    for (int s = 0; s <= 40; s += 2) t.add(at(s, 20 + s + (s % 3)), 600);
    full_prediction p;
    ASSERT_EQ(t.predict(40, p), trend_state::rising);
    EXPECT_NEAR(p.bytes_per_second / mib, 1.0, 0.15);
    // The floor at 40 s is about 60 MiB: about 40 s to 100 MiB.
    EXPECT_NEAR(p.seconds_to_full, 40, 6);
    EXPECT_NEAR(p.floor_percent, 60, 3);
    EXPECT_EQ(p.points, 21u);
    EXPECT_DOUBLE_EQ(p.span_seconds, 40);
}

TEST(heap_trend, a_sawtooth_whose_collections_return_to_the_same_floor_is_steady) {
    heap_trend t;
    // Filling with garbage from 30 to 80 MiB in 10 s, collected back to 30, four times.
    for (int s = 0; s <= 40; ++s) t.add(at(s, 30 + 5 * (s % 10)), 600);
    full_prediction p;
    EXPECT_EQ(t.predict(40, p), trend_state::steady);
}

TEST(heap_trend, a_cache_filled_once_is_a_step_not_a_rise) {
    heap_trend t;
    for (int s = 0; s <= 40; ++s) t.add(at(s, s < 20 ? 10 : 70), 600);
    full_prediction p;
    EXPECT_EQ(t.predict(40, p), trend_state::steady);
    // Also when the step falls on the boundary of two thirds.
    heap_trend u;
    for (int s = 0; s <= 42; ++s) u.add(at(s, s < 14 ? 10 : 70), 600);
    EXPECT_EQ(u.predict(42, p), trend_state::steady);
}

TEST(heap_trend, noise_around_a_stable_level_is_steady) {
    heap_trend t;
    for (int s = 0; s <= 60; ++s) t.add(at(s, 50 + 8 * std::sin(s * 1.7)), 600);
    full_prediction p;
    EXPECT_EQ(t.predict(60, p), trend_state::steady);
}

TEST(heap_trend, readings_between_collections_count_only_once_a_later_collection_confirms_them) {
    // A stable heap (a collection every 3 s back to 40 MiB, 8 MiB/s allocated in between), read
    // every 0.25 s as Shenandoah's live figures allow: the rise between collections is no trend.
    heap_trend t;
    for (int q = 0; q <= 4 * 30; ++q) {
        const double second = q / 4.0;
        const double since = std::fmod(second, 3.0);
        after_collection m = at(second, 40 + 8 * since);
        m.collections = since < 0.25 ? 1 : 0;
        t.add(m, 600);
    }
    full_prediction p;
    for (double window : {5.0, 10.0, 30.0}) EXPECT_EQ(t.predict(window, p), trend_state::steady) << window;
    // Readings only, no collection yet: nothing to say.
    heap_trend u;
    for (int s = 0; s < 20; ++s) {
        after_collection m = at(s, 10 + s);
        m.collections = 0;
        u.add(m, 600);
    }
    EXPECT_EQ(u.predict(10, p), trend_state::learning);
}

TEST(heap_trend, too_few_or_too_recent_measurements_are_still_learning) {
    heap_trend t;
    full_prediction p;
    EXPECT_EQ(t.predict(60, p), trend_state::learning);
    for (int s = 0; s < 5; ++s) t.add(at(s * 10, 10 + 10 * s), 600);
    EXPECT_EQ(t.predict(60, p), trend_state::learning);  // 5 measurements
    heap_trend u;
    for (int s = 0; s <= 20; ++s) u.add(at(s, 10 + s), 600);
    EXPECT_EQ(u.predict(60, p), trend_state::learning);  // 20 s of a 60 s window
    EXPECT_EQ(u.predict(30, p), trend_state::rising);
}

TEST(heap_trend, only_the_window_counts_and_the_store_is_bounded) {
    heap_trend t;
    // Rising for 100 s, then flat for 100 s: steady over the last 60 s.
    for (int s = 0; s <= 200; ++s) t.add(at(s, s < 100 ? 10 + 0.5 * s : 60), 1000);
    full_prediction p;
    EXPECT_EQ(t.predict(60, p), trend_state::steady);
    EXPECT_EQ(t.predict(200, p), trend_state::steady);  // the last third is flat
    // Older than the horizon goes; beyond max_points, evenly spread.
    heap_trend u;
    for (int s = 0; s <= 5000; ++s) u.add(at(s, 10), 3000);
    EXPECT_LE(u.points().size(), heap_trend::max_points);
    EXPECT_GE(u.points().front().at, 2000);
    EXPECT_DOUBLE_EQ(u.points().back().at, 5000);
    // A measurement older than the newest starts again.
    u.add(at(1, 10), 3000);
    EXPECT_EQ(u.points().size(), 1u);
}

}  // namespace
}  // namespace heapd::daemon
