// Tests of G1's filler objects set apart (analysis/fillers.h) on synthetic dumps: which int[] count,
// where they go in the histogram, the reachability summary and the waste report.
#include "analysis/fillers.h"

#include <gtest/gtest.h>

#include <string_view>

#include "analysis/analysis.h"
#include "support/hprof_builder.h"

namespace heapd {
namespace {

using test::hprof_builder;
using test::values;

constexpr std::uint8_t t_object = 2, t_int = 10;
constexpr std::uint64_t object_class = 0x100, holder_class = 0x101, filler_class = 0x102;

// A Holder whose static keeps an int[2] and an int[3] alive; besides, garbage: int[4] of zeros, an
// int[2] of ones, an int[0] and an int[5] of zeros. jdk.internal.vm.FillerObject is loaded when
// filler_class_loaded (a JVM of JDK 19 or later).
hprof_builder filler_dump(bool filler_class_loaded) {
    hprof_builder b(8);
    b.utf8(1, "java/lang/Object").load_class(1, object_class, 0, 1);
    b.utf8(2, "demo/Holder").load_class(2, holder_class, 0, 2);
    if (filler_class_loaded) b.utf8(3, "jdk/internal/vm/FillerObject").load_class(3, filler_class, 0, 3);
    b.utf8(4, "kept").utf8(5, "odd");
    b.begin_segment();
    b.class_dump(object_class, 0, {});
    b.class_dump(holder_class, object_class, {},
                 {{4, t_object, values(8).id(0x2000).bytes()}, {5, t_object, values(8).id(0x2010).bytes()}});
    if (filler_class_loaded) b.class_dump(filler_class, object_class, {}).root_sticky_class(filler_class);
    b.root_sticky_class(holder_class);
    b.primitive_array(0x2000, t_int, 2);                                 // live, even
    b.primitive_array(0x2010, t_int, 3);                                 // live, odd
    b.primitive_array(0x3000, t_int, 4);                                 // filler of zeros: 32
    b.primitive_array(0x3020, t_int, 2, values(8).u4(1).u4(1).bytes());  // filler: 24
    b.primitive_array(0x3040, t_int, 0);                                 // filler: 16
    b.primitive_array(0x3050, t_int, 5);                                 // dead, odd: 40
    b.end_segment();
    b.heap_dump_end();
    return b;
}

const histogram_entry* row(const analysis_report& r, std::string_view name) {
    for (const auto& e : r.histogram)
        if (e.class_name == name) return &e;
    return nullptr;
}

const zero_array_entry* zeros(const analysis_report& r, std::string_view name) {
    for (const auto& e : r.waste.zero_arrays)
        if (e.class_name == name) return &e;
    return nullptr;
}

TEST(fillers, unreachable_int_arrays_of_even_length_are_set_apart) {
    auto r = analyze_dump(filler_dump(true).span(), {});
    ASSERT_TRUE(r.has_value()) << r.error().describe();
    ASSERT_NE(row(*r, std::string(filler_array_name)), nullptr);
    EXPECT_EQ(row(*r, std::string(filler_array_name))->instances, 3u);
    EXPECT_EQ(row(*r, std::string(filler_array_name))->shallow_bytes, 32u + 24 + 16);
    EXPECT_EQ(row(*r, "int[]")->instances, 3u);  // the live two and the dead odd one
    EXPECT_EQ(row(*r, "int[]")->reachable_instances, 2u);
    EXPECT_EQ(row(*r, "int[]")->reachable_bytes, 24u + 32);
    EXPECT_EQ(row(*r, std::string(filler_array_name))->reachable_instances, 0u);
    EXPECT_EQ(r->retention.filler_objects, 3u);
    EXPECT_EQ(r->retention.filler_bytes, 72u);
    EXPECT_EQ(r->retention.unreachable_objects, 4u);
    // Of the arrays of zeros only the live int[2], int[3] and the dead int[5] are waste.
    ASSERT_NE(zeros(*r, "int[]"), nullptr);
    EXPECT_EQ(zeros(*r, "int[]")->count, 3u);
    EXPECT_EQ(zeros(*r, "int[]")->bytes, 24u + 32 + 40);
}

TEST(fillers, none_before_jdk_19_or_without_the_object_graph) {
    auto old = analyze_dump(filler_dump(false).span(), {});
    ASSERT_TRUE(old.has_value());
    EXPECT_EQ(row(*old, std::string(filler_array_name)), nullptr);
    EXPECT_EQ(row(*old, "int[]")->instances, 6u);
    EXPECT_EQ(old->retention.filler_objects, 0u);
    analysis_options no_graph;
    no_graph.retained = false;
    auto quick = analyze_dump(filler_dump(true).span(), no_graph);
    ASSERT_TRUE(quick.has_value());
    EXPECT_EQ(row(*quick, "int[]")->instances, 6u);
}

}  // namespace
}  // namespace heapd
