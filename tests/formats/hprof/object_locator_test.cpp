// Tests of locating a few objects by id with one walk over the heap, or through a finder of their records.
#include "formats/hprof/object_locator.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <vector>

#include "formats/hprof/hprof_reader.h"
#include "support/hprof_builder.h"

namespace heapd {
namespace {

using test::byte_vector;
using test::hprof_builder;
using test::values;

constexpr std::uint8_t t_int = 10, t_long = 11;

record_index index_of(const hprof_builder& b) {
    auto reader = hprof_reader::parse(b.span());
    EXPECT_TRUE(reader.has_value());
    return record_index::build(*reader);
}

class object_locator_test : public ::testing::TestWithParam<unsigned> {};

// Objects of every kind over three segments, the first with roots and a class.
hprof_builder fixture(unsigned id, std::uint64_t* instance_at = nullptr) {
    hprof_builder b(id);
    b.utf8(1, "demo/Thing").load_class(1, 0x100, 0, 1).utf8(2, "x");
    b.begin_segment();
    b.class_dump(0x100, 0, {{2, t_int}});
    b.root_sticky_class(0x100).root_java_frame(0x1000, 1, 0);
    if (instance_at) *instance_at = b.size();
    b.instance(0x1000, 0x100, values(id).u4(0xCAFE).bytes(), 77);
    b.instance(0x1010, 0x100, values(id).u4(1).bytes());
    b.end_segment();
    b.begin_segment();
    b.object_array(0x2000, 0x100, {0x1000, 0, 0x1010}, 78);
    b.end_segment();
    b.begin_segment();
    b.primitive_array(0x3000, t_long, 2, values(id).u8(5).u8(6).bytes(), 79);
    b.primitive_array_nodata(0x3010, t_int, 9);
    b.end_segment();
    return b;
}

TEST_P(object_locator_test, finds_instances_and_arrays_in_any_segment) {
    const unsigned id = GetParam();
    std::uint64_t instance_at = 0;
    const hprof_builder b = fixture(id, &instance_at);
    record_index idx = index_of(b);
    const std::vector<std::uint64_t> ids = {0x3000, 0x1000, 0x2000, 0x3010, 0x9999, 0x1000, 0};
    object_locator objects(idx, ids);

    const located_object* inst = objects.find(0x1000);
    ASSERT_NE(inst, nullptr);
    EXPECT_EQ(inst->tag, 0x21);
    EXPECT_EQ(inst->instance.id, 0x1000u);
    EXPECT_EQ(inst->instance.class_id, 0x100u);
    EXPECT_EQ(inst->instance.trace_serial, 77u);
    EXPECT_EQ(inst->instance.offset, instance_at);
    EXPECT_EQ(byte_vector(inst->instance.data.begin(), inst->instance.data.end()), values(id).u4(0xCAFE).bytes());

    const located_object* arr = objects.find(0x2000);
    ASSERT_NE(arr, nullptr);
    EXPECT_EQ(arr->tag, 0x22);
    EXPECT_EQ(arr->object_array.class_id, 0x100u);
    EXPECT_EQ(arr->object_array.trace_serial, 78u);
    ASSERT_EQ(arr->object_array.length, 3u);
    EXPECT_EQ(arr->object_array.element(0), 0x1000u);
    EXPECT_EQ(arr->object_array.element(1), 0u);
    EXPECT_EQ(arr->object_array.element(2), 0x1010u);

    const located_object* prim = objects.find(0x3000);
    ASSERT_NE(prim, nullptr);
    EXPECT_EQ(prim->tag, 0x23);
    EXPECT_EQ(prim->primitive_array.type, t_long);
    EXPECT_EQ(prim->primitive_array.length, 2u);
    EXPECT_EQ(prim->primitive_array.trace_serial, 79u);
    EXPECT_EQ(byte_vector(prim->primitive_array.data.begin(), prim->primitive_array.data.end()),
              values(id).u8(5).u8(6).bytes());

    const located_object* nodata = objects.find(0x3010);
    ASSERT_NE(nodata, nullptr);
    EXPECT_EQ(nodata->tag, 0x23);
    EXPECT_EQ(nodata->primitive_array.length, 9u);
    EXPECT_TRUE(nodata->primitive_array.data.empty());

    EXPECT_EQ(objects.find(0x9999), nullptr);  // asked for, not in the dump
    EXPECT_EQ(objects.find(0x1010), nullptr);  // in the dump, not asked for
    EXPECT_EQ(objects.find(0x100), nullptr);   // a class is not located
    EXPECT_EQ(objects.find(0), nullptr);
}

TEST_P(object_locator_test, no_ids_find_nothing) {
    const hprof_builder b = fixture(GetParam());
    record_index idx = index_of(b);
    object_locator none(idx, {});
    EXPECT_EQ(none.find(0x1000), nullptr);
    const std::uint64_t zero[] = {0, 0};
    object_locator zeros(idx, zero);
    EXPECT_EQ(zeros.find(0), nullptr);
    EXPECT_EQ(zeros.find(0x1000), nullptr);
}

// With a finder (the object graph's record offsets), records are read where it says and nothing is
// walked: an object it does not know is not found, and a record of another object is no answer.
TEST_P(object_locator_test, a_finder_reads_records_where_it_says_without_a_walk) {
    const unsigned id = GetParam();
    std::uint64_t instance_at = 0;
    const hprof_builder b = fixture(id, &instance_at);
    record_index idx = index_of(b);
    // Where a walk finds them.
    const std::vector<std::uint64_t> all = {0x1000, 0x1010, 0x2000, 0x3000};
    object_locator walked(idx, all);
    std::map<std::uint64_t, std::uint64_t> offset_of;
    for (std::uint64_t o : all) {
        const located_object* l = walked.find(o);
        ASSERT_NE(l, nullptr);
        offset_of[o] = l->tag == 0x21   ? l->instance.offset
                       : l->tag == 0x22 ? l->object_array.offset
                                        : l->primitive_array.offset;
    }
    EXPECT_EQ(offset_of[0x1000], instance_at);
    int asked = 0;
    const record_finder finder = [&](std::uint64_t wanted) -> std::optional<std::uint64_t> {
        ++asked;
        if (wanted == 0x1010) return std::nullopt;       // unknown to it: a walk would find it
        if (wanted == 0x3000) return offset_of[0x2000];  // a wrong record: another object's
        return offset_of.count(wanted) ? std::optional(offset_of[wanted]) : std::nullopt;
    };
    object_locator found(idx, std::vector<std::uint64_t>{0x1000, 0x1010, 0x2000, 0x3000, 0x1000}, finder);
    EXPECT_EQ(asked, 4);  // once per distinct id
    const located_object* inst = found.find(0x1000);
    ASSERT_NE(inst, nullptr);
    EXPECT_EQ(inst->tag, 0x21);
    EXPECT_EQ(byte_vector(inst->instance.data.begin(), inst->instance.data.end()), values(id).u4(0xCAFE).bytes());
    const located_object* arr = found.find(0x2000);
    ASSERT_NE(arr, nullptr);
    EXPECT_EQ(arr->object_array.length, 3u);
    EXPECT_EQ(found.find(0x1010), nullptr);  // no walk: what the finder does not know is not found
    EXPECT_EQ(found.find(0x3000), nullptr);  // the record there was not 0x3000's
}

INSTANTIATE_TEST_SUITE_P(id_sizes, object_locator_test, ::testing::Values(4u, 8u));

TEST(object_locator, objects_after_damage_in_a_segment_are_missed_but_later_segments_are_searched) {
    hprof_builder b(8);
    b.begin_segment();
    b.primitive_array(0x10, t_int, 1);
    b.raw_subrecord(values(8).u1(0x42).bytes());
    b.primitive_array(0x20, t_int, 1);
    b.end_segment();
    b.begin_segment().primitive_array(0x30, t_int, 1).end_segment();
    record_index idx = index_of(b);
    const std::uint64_t ids[] = {0x10, 0x20, 0x30};
    object_locator objects(idx, ids);
    EXPECT_NE(objects.find(0x10), nullptr);
    EXPECT_EQ(objects.find(0x20), nullptr);
    EXPECT_NE(objects.find(0x30), nullptr);
}

TEST(object_locator, a_truncated_last_segment_yields_the_objects_before_the_cut) {
    hprof_builder b(8);
    b.begin_segment();
    b.primitive_array(0x10, t_int, 1);
    b.primitive_array(0x20, t_int, 100);
    b.end_segment();
    b.truncate(b.size() - 10);
    record_index idx = index_of(b);
    ASSERT_TRUE(idx.truncated());
    const std::uint64_t ids[] = {0x10, 0x20};
    object_locator objects(idx, ids);
    EXPECT_NE(objects.find(0x10), nullptr);
    EXPECT_EQ(objects.find(0x20), nullptr);
}

}  // namespace
}  // namespace heapd
