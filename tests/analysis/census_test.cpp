// Tests of the histogram pass: counts, shallow sizes, layout inference and the largest objects.
#include "analysis/census.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "formats/hprof/heap_walk.h"
#include "support/hprof_builder.h"

namespace heapd {
namespace {

using test::hprof_builder;
using test::values;

constexpr std::uint8_t t_object = 2, t_char = 5, t_byte = 8, t_int = 10, t_long = 11;

// Class ids of the synthetic dumps.
constexpr std::uint64_t object_class = 0x100, class_class = 0x101, point_class = 0x102, node_class = 0x103,
                        object_array_class = 0x104, int_array_class = 0x105, holder_class = 0x106;

// Writes UTF8 + LOAD_CLASS for each class and starts a segment holding their CLASS_DUMPs.
void declare_classes(hprof_builder& b) {
    const std::pair<std::uint64_t, const char*> names[] = {{object_class, "java/lang/Object"},
                                                           {class_class, "java/lang/Class"},
                                                           {point_class, "demo/Point"},
                                                           {node_class, "demo/Node"},
                                                           {object_array_class, "[Ljava/lang/Object;"},
                                                           {int_array_class, "[I"},
                                                           {holder_class, "demo/Holder"}};
    std::uint32_t serial = 1;
    for (auto [class_id, name] : names) {
        b.utf8(0x900 + serial, name);
        b.load_class(serial, class_id, 0, 0x900 + serial);
        ++serial;
    }
    const std::pair<std::uint64_t, const char*> field_names[] = {
        {0x801, "x"}, {0x802, "y"}, {0x803, "next"}, {0x804, "value"}, {0x805, "s1"}, {0x806, "s2"}, {0x807, "s3"}};
    for (auto [name_id, text] : field_names) b.utf8(name_id, text);
    b.begin_segment();
    b.class_dump(object_class, 0, {});
    b.class_dump(class_class, object_class, {});
    b.class_dump(point_class, object_class, {{0x802, t_int}, {0x801, t_int}}, {}, 8);
    b.class_dump(node_class, object_class, {{0x804, t_long}, {0x803, t_object}}, {}, 16);
    b.class_dump(object_array_class, object_class, {});
    b.class_dump(int_array_class, object_class, {});
    b.class_dump(
        holder_class, object_class, {},
        {{0x805, t_long, values(8).u8(1)}, {0x806, t_int, values(8).u4(2)}, {0x807, t_object, values(8).u8(0)}});
}

// Runs the census over a finished builder.
census_result census_of(const hprof_builder& b, unsigned top) {
    auto reader = hprof_reader::parse(b.span());
    EXPECT_TRUE(reader.has_value());
    record_index idx = record_index::build(*reader);
    EXPECT_TRUE(idx.problems().empty());
    class_table classes(idx);
    heap_census census(idx, classes, top);
    problem_list problems;
    walk_heap(idx, census, &problems);
    EXPECT_TRUE(problems.empty());
    return census.finish();
}

const histogram_entry* row(const census_result& r, std::string_view name) {
    for (const auto& e : r.histogram)
        if (e.class_name == name) return &e;
    return nullptr;
}

// A dump whose ids are addresses of objects laid out back to back with compressed oops.
hprof_builder compressed_dump() {
    hprof_builder b(8, "JAVA PROFILE 1.0.2", 1000);
    declare_classes(b);
    b.root_sticky_class(object_class).root_sticky_class(class_class);
    b.root_thread_object(0x10030, 1, 0).root_java_frame(0x10000, 1, 0).root_jni_global(0x10018, 0x77);
    b.heap_dump_info(0x41, 0x801);
    b.instance(0x10000, point_class, values(8).u4(1).u4(2).bytes());       // 24 bytes
    b.instance(0x10018, point_class, values(8).u4(3).u4(4).bytes());       // 24
    b.instance(0x10030, node_class, values(8).u8(0).u8(5).bytes());        // 24
    b.object_array(0x10048, object_array_class, {0x10000, 0, 0});          // 16 + 3*4 -> 32
    b.primitive_array(0x10068, t_int, 10);                                 // 16 + 40 = 56
    b.instance(0x100A0, node_class, values(8).u8(0x10030).u8(6).bytes());  // 24
    b.object_array(0x100B8, object_array_class, {0x100A0});                // 16 + 4 -> 24
    b.primitive_array(0x100D0, t_int, 1000);                               // 16 + 4000 = 4016
    b.primitive_array(0x11080, t_byte, 3);                                 // 16 + 3 -> 24
    b.primitive_array_nodata(0x11098, t_char, 5);                          // 16 + 10 -> 32
    b.end_segment();
    b.heap_dump_end();
    return b;
}

TEST(census, counts_and_shallow_sizes_under_the_inferred_compressed_layout) {
    hprof_builder b = compressed_dump();
    census_result r = census_of(b, 6);

    EXPECT_EQ(r.layout, "64-bit, compressed oops");
    EXPECT_EQ(r.layout_evidence, 5u);  // every array is followed by its neighbour at exactly its size
    EXPECT_EQ(r.instances, 4u);
    EXPECT_EQ(r.object_arrays, 2u);
    EXPECT_EQ(r.primitive_arrays, 4u);
    EXPECT_EQ(r.classes, 7u);

    struct expected_row {
        const char* name;
        std::uint64_t class_id, instances, bytes;
    };
    // Mirrors: a plain java.lang.Class is 48 bytes (injected fields); demo.Holder's statics make it 72.
    const expected_row rows[] = {
        {"int[]", int_array_class, 2, 56 + 4016},
        {"java.lang.Class", class_class, 7, 6 * 48 + 72},
        {"java.lang.Object[]", object_array_class, 2, 32 + 24},
        {"demo.Node", node_class, 2, 2 * 24},
        {"demo.Point", point_class, 2, 2 * 24},
        {"char[]", 0, 1, 32},
        {"byte[]", 0, 1, 24},
    };
    ASSERT_EQ(r.histogram.size(), std::size(rows));
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < std::size(rows); ++i) {
        SCOPED_TRACE(rows[i].name);
        EXPECT_EQ(r.histogram[i].class_name, rows[i].name);
        EXPECT_EQ(r.histogram[i].class_id, rows[i].class_id);
        EXPECT_EQ(r.histogram[i].instances, rows[i].instances);
        EXPECT_EQ(r.histogram[i].shallow_bytes, rows[i].bytes);
        total += rows[i].bytes;
    }
    EXPECT_EQ(r.shallow_bytes, total);
    EXPECT_EQ(total, 4640u);
}

TEST(census, counts_roots_and_sub_records) {
    hprof_builder b = compressed_dump();
    census_result r = census_of(b, 0);
    std::array<std::uint64_t, root_kind_count> roots{};
    roots[static_cast<unsigned>(root_kind::sticky_class)] = 2;
    roots[static_cast<unsigned>(root_kind::thread_object)] = 1;
    roots[static_cast<unsigned>(root_kind::java_frame)] = 1;
    roots[static_cast<unsigned>(root_kind::jni_global)] = 1;
    EXPECT_EQ(r.roots, roots);
    std::array<std::uint64_t, 256> subs{};
    subs[0x05] = 2;
    subs[0x08] = 1;
    subs[0x03] = 1;
    subs[0x01] = 1;
    subs[0xFE] = 1;
    subs[0x20] = 7;
    subs[0x21] = 4;
    subs[0x22] = 2;
    subs[0x23] = 3;
    subs[0xC3] = 1;
    EXPECT_EQ(r.subrecord_counts, subs);
    EXPECT_TRUE(r.largest.empty());
}

TEST(census, largest_objects_by_size_then_id) {
    hprof_builder b = compressed_dump();
    census_result r = census_of(b, 6);
    struct expected_object {
        std::uint64_t id, class_id;
        const char* name;
        std::uint64_t bytes, length;
        bool array;
    };
    const expected_object objects[] = {
        {0x100D0, 0, "int[]", 4016, 1000, true},
        {0x10068, 0, "int[]", 56, 10, true},
        {0x10048, object_array_class, "java.lang.Object[]", 32, 3, true},
        {0x11098, 0, "char[]", 32, 5, true},
        {0x10000, point_class, "demo.Point", 24, 0, false},
        {0x10018, point_class, "demo.Point", 24, 0, false},
    };
    ASSERT_EQ(r.largest.size(), std::size(objects));
    for (std::size_t i = 0; i < std::size(objects); ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(r.largest[i].id, objects[i].id);
        EXPECT_EQ(r.largest[i].class_id, objects[i].class_id);
        EXPECT_EQ(r.largest[i].class_name, objects[i].name);
        EXPECT_EQ(r.largest[i].shallow_bytes, objects[i].bytes);
        EXPECT_EQ(r.largest[i].length, objects[i].length);
        EXPECT_EQ(r.largest[i].is_array, objects[i].array);
    }
    census_result top2 = census_of(b, 2);
    ASSERT_EQ(top2.largest.size(), 2u);
    EXPECT_EQ(top2.largest[0].id, 0x100D0u);
    EXPECT_EQ(top2.largest[1].id, 0x10068u);
}

TEST(census, adjacency_selects_uncompressed_oops_when_arrays_are_spaced_so) {
    hprof_builder b(8);
    declare_classes(b);
    b.instance(0x20000, node_class, values(8).u8(0).u8(0).bytes());  // 32 with 8-byte oops
    b.object_array(0x20020, object_array_class, {0, 0, 0});          // 16 + 3*8 = 40
    b.primitive_array(0x20048, t_int, 10);                           // 56
    b.object_array(0x20080, object_array_class, {0});                // 24
    b.instance(0x20098, node_class, values(8).u8(0).u8(0).bytes());
    b.end_segment();
    census_result r = census_of(b, 0);
    EXPECT_EQ(r.layout, "64-bit, uncompressed oops");
    EXPECT_EQ(r.layout_evidence, 3u);
    const histogram_entry* node = row(r, "demo.Node");
    ASSERT_NE(node, nullptr);
    EXPECT_EQ(node->instances, 2u);
    EXPECT_EQ(node->shallow_bytes, 2u * 32);
    const histogram_entry* arrays = row(r, "java.lang.Object[]");
    ASSERT_NE(arrays, nullptr);
    EXPECT_EQ(arrays->shallow_bytes, 40u + 24);
    EXPECT_EQ(row(r, "int[]")->shallow_bytes, 56u);
}

// Arrays of a JDK 25 with -XX:+UseCompactObjectHeaders, written downwards as ZGC writes a page: each
// ends where the one written before it starts. Compact headers are believed only of classes of a
// release that has them (Thread with a holder: JDK 19 or later).
census_result compact_dump_written_downwards(bool jdk_19_or_later) {
    hprof_builder b(8);
    b.utf8(1, "java/lang/String").load_class(1, 0x110, 0, 1);
    b.utf8(2, "java/lang/Thread").load_class(2, 0x111, 0, 2);
    b.utf8(3, "[Ljava/lang/Object;").load_class(3, 0x112, 0, 3);
    b.utf8(4, "hashIsZero").utf8(5, "holder").utf8(6, "priority");
    b.begin_segment();
    b.class_dump(0x110, 0, {{4, t_byte}});
    b.class_dump(0x111, 0, {{jdk_19_or_later ? 5u : 6u, jdk_19_or_later ? t_object : t_int}});
    b.class_dump(0x112, 0, {});
    b.primitive_array(0x30040, t_byte, 1);      // 12 + 1 -> 16
    b.primitive_array(0x30030, t_int, 1);       // 12 + 4 -> 16
    b.primitive_array(0x30018, t_byte, 5);      // 12 + 5 -> 24
    b.object_array(0x30000, 0x112, {0, 0, 0});  // 12 + 12 -> 24
    b.end_segment();
    return census_of(b, 0);
}

TEST(census, compact_headers_are_inferred_from_a_dump_written_downwards) {
    census_result r = compact_dump_written_downwards(true);
    EXPECT_EQ(r.layout, "64-bit, compact object headers, compressed oops");
    EXPECT_TRUE(r.layout_inferred);
    EXPECT_EQ(r.layout_evidence, 3u);
    EXPECT_EQ(row(r, "java.lang.Object[]")->shallow_bytes, 24u);
    EXPECT_EQ(row(r, "byte[]")->shallow_bytes, 16u + 24);
    // The same arrays from a JDK 18 or older: no compact headers there.
    census_result old = compact_dump_written_downwards(false);
    EXPECT_EQ(old.layout, "64-bit, compressed oops");
    EXPECT_FALSE(old.layout_inferred);
}

TEST(census, neighbour_gaps_slightly_above_the_field_layout_are_taken_as_the_size) {
    hprof_builder b(8);
    b.utf8(1, "demo/Hidden").load_class(1, 0x110, 0, 1);
    b.utf8(2, "demo/Spaced").load_class(2, 0x111, 0, 2);
    b.utf8(3, "a");
    b.begin_segment();
    b.class_dump(0x110, 0, {{3, t_int}});  // 12 + 4 = 16 by its fields
    b.class_dump(0x111, 0, {{3, t_int}});
    b.instance(0x30000, 0x110, values(8).u4(0).bytes());
    b.instance(0x30018, 0x110, values(8).u4(0).bytes());  // 24 apart: 8 hidden bytes
    b.instance(0x30030, 0x110, values(8).u4(0).bytes());
    b.primitive_array(0x30048, t_int, 0);  // 16
    b.primitive_array(0x30058, t_byte, 0);
    b.instance(0x40000, 0x111, values(8).u4(0).bytes());
    b.instance(0x40028, 0x111, values(8).u4(0).bytes());  // 40 apart: free space, not the size
    b.end_segment();
    census_result r = census_of(b, 0);
    EXPECT_EQ(r.layout, "64-bit, compressed oops");
    EXPECT_EQ(row(r, "demo.Hidden")->shallow_bytes, 3u * 24);
    EXPECT_EQ(row(r, "demo.Spaced")->shallow_bytes, 2u * 16);
}

TEST(census, gaps_are_ignored_when_ids_are_not_addresses) {
    hprof_builder b(8);
    b.utf8(1, "demo/Hidden").load_class(1, 0x110, 0, 1).utf8(3, "a");
    b.begin_segment();
    b.class_dump(0x110, 0, {{3, t_int}});
    b.instance(0x30000, 0x110, values(8).u4(0).bytes());
    b.instance(0x30018, 0x110, values(8).u4(0).bytes());
    b.primitive_array(0x30030, t_int, 0);
    b.primitive_array(0x30031, t_int, 0);  // one id apart: no layout fits
    b.end_segment();
    census_result r = census_of(b, 0);
    EXPECT_EQ(r.layout, "64-bit, compressed oops");
    EXPECT_EQ(r.layout_evidence, 0u);
    EXPECT_EQ(row(r, "demo.Hidden")->shallow_bytes, 2u * 16);
}

TEST(census, four_byte_ids_use_the_32_bit_layout) {
    hprof_builder b(4, "JAVA PROFILE 1.0.1");
    b.utf8(1, "demo/Point").load_class(1, 0x110, 0, 1).utf8(2, "x").utf8(3, "y");
    b.utf8(4, "[Ljava/lang/Object;").load_class(2, 0x111, 0, 4);
    b.begin_segment();
    b.class_dump(0x110, 0, {{2, t_int}, {3, t_int}});
    b.instance(0x1000, 0x110, values(4).u4(0).u4(0).bytes());  // 8 + 8 = 16
    b.object_array(0x1010, 0x111, {0, 0, 0});                  // 8 + 4 + 12 = 24
    b.primitive_array(0x1028, t_int, 10);                      // 12 + 40 -> 56
    b.primitive_array(0x1060, t_long, 2);                      // 16 + 16 = 32
    b.end_segment();
    census_result r = census_of(b, 0);
    EXPECT_EQ(r.layout, "32-bit");
    EXPECT_EQ(r.layout_evidence, 2u);
    EXPECT_EQ(row(r, "demo.Point")->shallow_bytes, 16u);
    EXPECT_EQ(row(r, "java.lang.Object[]")->shallow_bytes, 24u);
    EXPECT_EQ(row(r, "int[]")->shallow_bytes, 56u);
    EXPECT_EQ(row(r, "long[]")->shallow_bytes, 32u);
    EXPECT_EQ(r.classes, 1u);
    EXPECT_EQ(row(r, "java.lang.Class"), nullptr);  // no CLASS_DUMP of java.lang.Class to size mirrors
}

}  // namespace
}  // namespace heapd
