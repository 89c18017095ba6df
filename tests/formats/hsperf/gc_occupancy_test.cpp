// The occupancy after collections from synthetic summaries shaped like each collector's hsperfdata:
// which collections measure for G1, Serial, Parallel, ZGC and Shenandoah, which space is measured,
// and Serial and Parallel trusting young collections only while full ones free little.
#include "formats/hsperf/gc_occupancy.h"

#include <gtest/gtest.h>

namespace heapd {
namespace {

constexpr std::int64_t mib = 1 << 20;

// A summary of a JVM of that policy and those collectors (name, invocations), its old generation
// (generation 1) at used of 100 MiB.
jvm_perf_summary jvm(std::string policy, std::vector<std::pair<std::string, std::int64_t>> collectors,
                     std::int64_t used_mib) {
    jvm_perf_summary s;
    s.gc_policy = std::move(policy);
    int index = 0;
    for (auto& [name, n] : collectors) s.collectors.push_back({index++, name, n, 0, 0});
    s.old_gen = hsperf_heap_usage{used_mib * mib, 100 * mib, 100 * mib};
    return s;
}

jvm_perf_summary g1(std::int64_t young, std::int64_t full, std::int64_t cycle, std::int64_t used) {
    return jvm("GarbageFirst",
               {{"G1 young collection pauses", young},
                {"G1 full collection pauses", full},
                {"G1 concurrent cycle pauses", cycle}},
               used);
}

jvm_perf_summary parallel(std::int64_t young, std::int64_t full, std::int64_t used) {
    return jvm("ParScav:MSC", {{"PSScavenge", young}, {"PSParallelCompact", full}}, used);
}

TEST(gc_occupancy, the_collector_family_comes_from_the_policy_or_the_collectors_names) {
    EXPECT_EQ(family_of(g1(0, 0, 0, 0)), collector_family::g1);
    EXPECT_EQ(family_of(parallel(0, 0, 0)), collector_family::parallel);
    EXPECT_EQ(family_of(jvm("Copy:MSC", {{"Copy", 0}, {"MSC", 0}}, 0)), collector_family::serial);
    EXPECT_EQ(family_of(jvm("", {{"", 0}, {"", 0}, {"Z concurrent cycle pauses", 0}}, 0)), collector_family::z);
    EXPECT_EQ(family_of(jvm("", {{"Shenandoah partial", 0}, {"Shenandoah full", 0}}, 0)), collector_family::shenandoah);
    EXPECT_EQ(family_of(jvm("Mystery", {{"mine", 0}}, 0)), collector_family::unknown);
    EXPECT_EQ(measured_space(collector_family::z), "heap");
    EXPECT_EQ(measured_space(collector_family::g1), "old generation");
}

TEST(gc_occupancy, g1_measures_after_every_pause_and_the_first_summary_only_sets_the_counts) {
    occupancy_tracker t;
    EXPECT_FALSE(t.feed(g1(5, 0, 0, 30), 0));  // the counts only
    EXPECT_FALSE(t.feed(g1(5, 0, 0, 30), 1));  // nothing collected since
    auto m = t.feed(g1(8, 0, 0, 40), 2);       // three young pauses
    ASSERT_TRUE(m);
    EXPECT_EQ(m->used, 40 * mib);
    EXPECT_EQ(m->max, 100 * mib);
    EXPECT_EQ(m->collections, 3);
    EXPECT_FALSE(m->full);
    EXPECT_DOUBLE_EQ(m->percent(), 40);
    EXPECT_DOUBLE_EQ(m->at, 2);
    m = t.feed(g1(8, 0, 2, 35), 3);  // a concurrent cycle's remark and cleanup
    ASSERT_TRUE(m);
    EXPECT_EQ(m->used, 35 * mib);
    m = t.feed(g1(8, 1, 2, 20), 4);  // a full collection
    ASSERT_TRUE(m);
    EXPECT_TRUE(m->full);
}

TEST(gc_occupancy, counters_going_back_are_another_jvm_and_start_again) {
    occupancy_tracker t;
    t.feed(g1(50, 1, 4, 30), 0);
    EXPECT_FALSE(t.feed(g1(2, 0, 0, 5), 1));
    EXPECT_TRUE(t.feed(g1(3, 0, 0, 6), 2));
}

TEST(gc_occupancy, parallel_trusts_young_collections_until_a_full_one_frees_garbage) {
    occupancy_tracker t;
    t.feed(parallel(10, 0, 20), 0);
    // No full collection yet: what young collections promote counts.
    auto m = t.feed(parallel(12, 0, 30), 1);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->used, 30 * mib);
    EXPECT_TRUE(t.young_measures());
    // A full collection freeing 2% of the maximum: what was promoted was live, as in a leak.
    m = t.feed(parallel(12, 1, 28), 2);
    ASSERT_TRUE(m);
    EXPECT_TRUE(m->full);
    EXPECT_TRUE(t.young_measures());
    EXPECT_TRUE(t.feed(parallel(13, 1, 60), 3));
    // One freeing 40%: the old generation held garbage; young collections no longer measure...
    m = t.feed(parallel(14, 2, 20), 4);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->used, 20 * mib);
    EXPECT_FALSE(t.young_measures());
    EXPECT_FALSE(t.feed(parallel(20, 2, 70), 5));
    // ...until a full collection frees little again.
    m = t.feed(parallel(20, 3, 68), 6);
    ASSERT_TRUE(m);
    EXPECT_TRUE(t.young_measures());
    EXPECT_TRUE(t.feed(parallel(21, 3, 69), 7));
}

TEST(gc_occupancy, zgc_and_shenandoah_measure_the_heap_after_each_cycle) {
    // ZGC: what GC.heap_info says, once per cycle ended since the last measurement; its hsperfdata
    // figure (as the pauses saw it) is not used.
    occupancy_tracker z;
    z.feed(jvm("", {{"Z concurrent cycle pauses", 3}}, 90), 0, 12 * mib);
    EXPECT_EQ(z.family(), collector_family::z);
    EXPECT_FALSE(z.feed(jvm("", {{"Z concurrent cycle pauses", 6}}, 90), 1));  // not asked
    auto m = z.feed(jvm("", {{"Z concurrent cycle pauses", 6}}, 90), 2, 20 * mib);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->collections, 3);
    EXPECT_EQ(m->used, 20 * mib);
    EXPECT_FALSE(m->full);
    EXPECT_FALSE(z.feed(jvm("", {{"Z concurrent cycle pauses", 6}}, 90), 3, 25 * mib));  // no cycle since
    m = z.feed(jvm("", {{"Z concurrent cycle pauses", 9}}, 90), 4, 22 * mib);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->used, 22 * mib);

    occupancy_tracker sh;
    sh.feed(jvm("", {{"Shenandoah partial", 0}, {"Shenandoah full", 40}}, 10), 0);
    EXPECT_FALSE(sh.feed(jvm("", {{"Shenandoah partial", 0}, {"Shenandoah full", 40}}, 50), 1));
    m = sh.feed(jvm("", {{"Shenandoah partial", 0}, {"Shenandoah full", 44}}, 15), 2);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->used, 15 * mib);
}

TEST(gc_occupancy, zgc_heap_used_from_gc_heap_info) {
    EXPECT_EQ(
        zgc_heap_used("12345:\n ZHeap           used 30M, capacity 64M, max capacity 64M\n Metaspace       used 143K, "
                      "committed 384K\n"),
        30 * mib);
    EXPECT_EQ(zgc_heap_used(" ZHeap           used 7G, capacity 8G, max capacity 8G\n"), std::int64_t{7} << 30);
    EXPECT_EQ(zgc_heap_used(" ZHeap           used 512K, capacity 8M\n"), 512 << 10);
    EXPECT_FALSE(zgc_heap_used(" garbage-first heap   total 65536K, used 8192K\n"));
    EXPECT_FALSE(zgc_heap_used(" ZHeap\n Metaspace used 143K\n"));
    EXPECT_FALSE(zgc_heap_used(" ZHeap used M"));
}

TEST(gc_occupancy, no_measured_space_or_no_maximum_measures_nothing) {
    occupancy_tracker t;
    jvm_perf_summary s = g1(1, 0, 0, 10);
    s.old_gen.reset();
    t.feed(s, 0);
    s.collectors[0].invocations = 5;
    EXPECT_FALSE(t.feed(s, 1));
}

}  // namespace
}  // namespace heapd
