// Tests of the heap sub-record views and the walker over heap dump segments.
#include "formats/hprof/heap_records.h"

#include <gtest/gtest.h>

#include <vector>

#include "formats/hprof/heap_walk.h"
#include "formats/hprof/record_index.h"
#include "support/hprof_builder.h"

namespace heapd {
namespace {

using test::hprof_builder;
using test::values;

// Keeps everything the walker hands out, in order.
struct recorder : heap_visitor {
    std::vector<root_view> roots;
    std::vector<class_dump_view> classes;
    std::vector<instance_view> instances;
    std::vector<object_array_view> object_arrays;
    std::vector<primitive_array_view> primitive_arrays;
    std::vector<heap_info_view> infos;
    std::vector<std::uint8_t> order;  // sub-record tags as visited

    void root(const root_view& r) {
        roots.push_back(r);
        order.push_back(0);
    }
    void class_dump(const class_dump_view& c) {
        classes.push_back(c);
        order.push_back(0x20);
    }
    void instance(const instance_view& v) {
        instances.push_back(v);
        order.push_back(0x21);
    }
    void object_array(const object_array_view& v) {
        object_arrays.push_back(v);
        order.push_back(0x22);
    }
    void primitive_array(const primitive_array_view& v) {
        primitive_arrays.push_back(v);
        order.push_back(0x23);
    }
    void heap_info(const heap_info_view& v) {
        infos.push_back(v);
        order.push_back(0xFE);
    }
};

// Parses the builder's bytes and indexes them; the builder must outlive the result.
record_index index_of(const hprof_builder& b) {
    auto r = hprof_reader::parse(b.span());
    EXPECT_TRUE(r.has_value());
    return record_index::build(*r);
}

// Walks the first heap record alone, returning what the walker returned.
result<void> walk_first(const record_index& idx, recorder& v) {
    EXPECT_FALSE(idx.heap_records().empty());
    const hprof_record& rec = idx.heap_records()[0];
    return walk_heap_body(rec.body, rec.body_offset, idx.id_size(), v);
}

class walker_test : public ::testing::TestWithParam<unsigned> {};

TEST_P(walker_test, visits_every_sub_record_kind_with_decoded_fields) {
    const unsigned id = GetParam();
    hprof_builder b(id);
    std::vector<std::uint64_t> at;  // offset of each sub-record
    auto mark = [&] { at.push_back(b.size()); };
    b.begin_segment();
    mark();
    b.heap_dump_info(3, 0x55);
    mark();
    b.root_unknown(0x1001);
    mark();
    b.root_jni_global(0x1002, 0x2002);
    mark();
    b.root_jni_local(0x1003, 5, 2);
    mark();
    b.root_java_frame(0x1004, 6, 3);
    mark();
    b.root_native_stack(0x1005, 7);
    mark();
    b.root_sticky_class(0x1006);
    mark();
    b.root_thread_block(0x1007, 8);
    mark();
    b.root_monitor_used(0x1008);
    mark();
    b.root_thread_object(0x1009, 9, 10);
    mark();
    b.root_interned_string(0x100A);
    mark();
    b.root_finalizing(0x100B);
    mark();
    b.root_debugger(0x100C);
    mark();
    b.root_reference_cleanup(0x100D);
    mark();
    b.root_vm_internal(0x100E);
    mark();
    b.root_jni_monitor(0x100F, 11, 12);
    mark();
    b.root_unreachable(0x1010);
    test::class_spec spec;
    spec.class_id = 0x3000;
    spec.trace_serial = 4;
    spec.super_id = 0x3001;
    spec.loader_id = 0x3002;
    spec.signers_id = 0x3003;
    spec.protection_domain_id = 0x3004;
    spec.instance_size = 9;
    spec.constants = {{1, 10, values(id).u4(0x01020304)}};
    spec.statics = {
        {0x60, 2, values(id).id(0x4444)}, {0x61, 11, values(id).u8(0x1122334455667788)}, {0x62, 4, values(id).u1(1)}};
    spec.fields = {{0x70, 10}, {0x71, 2}, {0x72, 8}};
    mark();
    b.class_dump(spec);
    mark();
    b.instance(0x5000, 0x3000, values(id).u4(42).id(0x5001).u1(7).bytes(), 13);
    mark();
    b.object_array(0x6000, 0x3005, {0x5000, 0, 0x5001}, 14);
    mark();
    b.primitive_array(0x7000, 10, 3, values(id).u4(1).u4(2).u4(3).bytes(), 15);
    mark();
    b.primitive_array(0x7001, 11, 0);
    mark();
    b.primitive_array_nodata(0x7002, 5, 1000, 16);
    b.end_segment();
    record_index idx = index_of(b);
    ASSERT_TRUE(idx.problems().empty());

    recorder v;
    auto r = walk_first(idx, v);
    ASSERT_TRUE(r.has_value()) << r.error().describe();
    ASSERT_EQ(v.order.size(), at.size());

    ASSERT_EQ(v.infos.size(), 1u);
    EXPECT_EQ(v.infos[0].heap_type, 3u);
    EXPECT_EQ(v.infos[0].name_id, 0x55u);
    EXPECT_EQ(v.infos[0].offset, at[0]);

    // Roots: kind, object, offset, thread serial, trace serial, frame index.
    struct expected_root {
        root_kind kind;
        std::uint64_t object;
        std::uint32_t thread, trace, frame;
    };
    const expected_root roots[] = {
        {root_kind::unknown, 0x1001, 0, 0, 0},           {root_kind::jni_global, 0x1002, 0, 0, 0},
        {root_kind::jni_local, 0x1003, 5, 0, 2},         {root_kind::java_frame, 0x1004, 6, 0, 3},
        {root_kind::native_stack, 0x1005, 7, 0, 0},      {root_kind::sticky_class, 0x1006, 0, 0, 0},
        {root_kind::thread_block, 0x1007, 8, 0, 0},      {root_kind::monitor_used, 0x1008, 0, 0, 0},
        {root_kind::thread_object, 0x1009, 9, 10, 0},    {root_kind::interned_string, 0x100A, 0, 0, 0},
        {root_kind::finalizing, 0x100B, 0, 0, 0},        {root_kind::debugger, 0x100C, 0, 0, 0},
        {root_kind::reference_cleanup, 0x100D, 0, 0, 0}, {root_kind::vm_internal, 0x100E, 0, 0, 0},
        {root_kind::jni_monitor, 0x100F, 11, 0, 12},     {root_kind::unreachable, 0x1010, 0, 0, 0},
    };
    ASSERT_EQ(v.roots.size(), std::size(roots));
    for (std::size_t i = 0; i < std::size(roots); ++i) {
        SCOPED_TRACE(root_kind_name(roots[i].kind));
        EXPECT_EQ(v.roots[i].kind, roots[i].kind);
        EXPECT_EQ(v.roots[i].object_id, roots[i].object);
        EXPECT_EQ(v.roots[i].offset, at[1 + i]);
        EXPECT_EQ(v.roots[i].thread_serial, roots[i].thread);
        EXPECT_EQ(v.roots[i].trace_serial, roots[i].trace);
        EXPECT_EQ(v.roots[i].frame_index, roots[i].frame);
    }

    ASSERT_EQ(v.classes.size(), 1u);
    const class_dump_view& c = v.classes[0];
    EXPECT_EQ(c.offset, at[17]);
    EXPECT_EQ(c.rec.size(), at[18] - at[17]);
    EXPECT_EQ(c.id_size, id);
    EXPECT_EQ(c.class_id(), 0x3000u);
    EXPECT_EQ(c.super_id(), 0x3001u);
    EXPECT_EQ(c.loader_id(), 0x3002u);
    EXPECT_EQ(c.signers_id(), 0x3003u);
    EXPECT_EQ(c.protection_domain_id(), 0x3004u);
    EXPECT_EQ(c.instance_size(), 9u);
    EXPECT_EQ(c.static_count(), 3u);
    EXPECT_EQ(c.field_count(), 3u);
    std::vector<class_dump_view::static_field> statics;
    c.for_each_static([&](const class_dump_view::static_field& f) { statics.push_back(f); });
    ASSERT_EQ(statics.size(), 3u);
    EXPECT_EQ(statics[0].name_id, 0x60u);
    EXPECT_EQ(statics[0].type, 2);
    ASSERT_EQ(statics[0].value.size(), id);
    EXPECT_EQ(be::id(statics[0].value.data(), id), 0x4444u);
    EXPECT_EQ(statics[1].name_id, 0x61u);
    EXPECT_EQ(statics[1].type, 11);
    ASSERT_EQ(statics[1].value.size(), 8u);
    EXPECT_EQ(be::u8(statics[1].value.data()), 0x1122334455667788u);
    EXPECT_EQ(statics[2].type, 4);
    ASSERT_EQ(statics[2].value.size(), 1u);
    EXPECT_EQ(be::u1(statics[2].value.data()), 1u);
    std::vector<class_dump_view::field> fields;
    c.for_each_field([&](const class_dump_view::field& f) { fields.push_back(f); });
    ASSERT_EQ(fields.size(), 3u);
    EXPECT_EQ(fields[0].name_id, 0x70u);
    EXPECT_EQ(fields[0].type, 10);
    EXPECT_EQ(fields[1].name_id, 0x71u);
    EXPECT_EQ(fields[1].type, 2);
    EXPECT_EQ(fields[2].name_id, 0x72u);
    EXPECT_EQ(fields[2].type, 8);

    ASSERT_EQ(v.instances.size(), 1u);
    const instance_view& in = v.instances[0];
    EXPECT_EQ(in.id, 0x5000u);
    EXPECT_EQ(in.class_id, 0x3000u);
    EXPECT_EQ(in.offset, at[18]);
    EXPECT_EQ(in.trace_serial, 13u);
    ASSERT_EQ(in.data.size(), 4u + id + 1u);
    EXPECT_EQ(be::u4(in.data.data()), 42u);
    EXPECT_EQ(be::id(in.data.data() + 4, id), 0x5001u);
    EXPECT_EQ(be::u1(in.data.data() + 4 + id), 7u);

    ASSERT_EQ(v.object_arrays.size(), 1u);
    const object_array_view& oa = v.object_arrays[0];
    EXPECT_EQ(oa.id, 0x6000u);
    EXPECT_EQ(oa.class_id, 0x3005u);
    EXPECT_EQ(oa.offset, at[19]);
    EXPECT_EQ(oa.trace_serial, 14u);
    EXPECT_EQ(oa.length, 3u);
    EXPECT_EQ(oa.id_size, id);
    EXPECT_EQ(oa.elements.size(), 3u * id);
    EXPECT_EQ(oa.element(0), 0x5000u);
    EXPECT_EQ(oa.element(1), 0u);
    EXPECT_EQ(oa.element(2), 0x5001u);

    ASSERT_EQ(v.primitive_arrays.size(), 3u);
    const primitive_array_view& pa = v.primitive_arrays[0];
    EXPECT_EQ(pa.id, 0x7000u);
    EXPECT_EQ(pa.offset, at[20]);
    EXPECT_EQ(pa.trace_serial, 15u);
    EXPECT_EQ(pa.length, 3u);
    EXPECT_EQ(pa.type, 10);
    ASSERT_EQ(pa.data.size(), 12u);
    EXPECT_EQ(be::u4(pa.data.data() + 8), 3u);
    EXPECT_EQ(v.primitive_arrays[1].id, 0x7001u);
    EXPECT_EQ(v.primitive_arrays[1].type, 11);
    EXPECT_EQ(v.primitive_arrays[1].length, 0u);
    EXPECT_TRUE(v.primitive_arrays[1].data.empty());
    const primitive_array_view& nd = v.primitive_arrays[2];
    EXPECT_EQ(nd.id, 0x7002u);
    EXPECT_EQ(nd.offset, at[22]);
    EXPECT_EQ(nd.trace_serial, 16u);
    EXPECT_EQ(nd.length, 1000u);
    EXPECT_EQ(nd.type, 5);
    EXPECT_TRUE(nd.data.empty());
}

TEST_P(walker_test, unknown_sub_record_tag_stops_at_its_offset) {
    const unsigned id = GetParam();
    hprof_builder b(id);
    b.begin_segment().root_unknown(1).root_sticky_class(2);
    const std::uint64_t bad = b.size();
    b.raw_subrecord(values(id).u1(0x42).id(3).bytes()).root_unknown(4).end_segment();
    record_index idx = index_of(b);
    recorder v;
    auto r = walk_first(idx, v);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, error_code::unknown_tag);
    EXPECT_EQ(r.error().offset, bad);
    EXPECT_NE(r.error().message.find("0x42"), std::string::npos) << r.error().message;
    EXPECT_EQ(v.roots.size(), 2u);  // what came before, nothing after
}

TEST_P(walker_test, sub_records_overrunning_the_segment_are_out_of_bounds) {
    const unsigned id = GetParam();
    struct damaged {
        const char* what;
        test::byte_vector bytes;
    };
    const damaged cases[] = {
        {"instance data", values(id).u1(0x21).id(1).u4(0).id(2).u4(100).u4(0).bytes()},
        {"instance header", values(id).u1(0x21).id(1).u4(0).bytes()},
        {"object array", values(id).u1(0x22).id(1).u4(0).u4(5).id(2).id(0).bytes()},
        {"primitive array", values(id).u1(0x23).id(1).u4(0).u4(4).u1(10).u4(0).bytes()},
        {"class dump fields", values(id)
                                  .u1(0x20)
                                  .id(1)
                                  .u4(0)
                                  .id(0)
                                  .id(0)
                                  .id(0)
                                  .id(0)
                                  .id(0)
                                  .id(0)
                                  .u4(0)
                                  .u2(0)
                                  .u2(0)
                                  .u2(2)
                                  .id(5)
                                  .u1(10)
                                  .bytes()},
        {"root", values(id).u1(0xFF).u2(1).bytes()},
        {"thread object root", values(id).u1(0x08).id(1).u4(1).bytes()},
        {"heap dump info", values(id).u1(0xFE).u4(1).bytes()},
    };
    for (const damaged& d : cases) {
        SCOPED_TRACE(d.what);
        hprof_builder b(id);
        b.begin_segment().root_monitor_used(9);
        const std::uint64_t bad = b.size();
        b.raw_subrecord(d.bytes).end_segment();
        record_index idx = index_of(b);
        recorder v;
        auto r = walk_first(idx, v);
        ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, error_code::out_of_bounds);
        EXPECT_EQ(r.error().offset, bad);
        EXPECT_EQ(v.roots.size(), 1u);
        EXPECT_TRUE(v.instances.empty() && v.object_arrays.empty() && v.primitive_arrays.empty() && v.classes.empty() &&
                    v.infos.empty());
    }
}

TEST_P(walker_test, invalid_basic_types_are_bad_values) {
    const unsigned id = GetParam();
    auto class_with = [&](std::uint8_t constant_type, std::uint8_t static_type, std::uint8_t field_type) {
        test::class_spec s;
        s.class_id = 0x10;
        s.constants = {{1, constant_type, test::byte_vector(value_size(constant_type, id))}};
        s.statics = {{0x20, static_type, test::byte_vector(value_size(static_type, id))}};
        s.fields = {{0x30, field_type}};
        hprof_builder scratch(id);
        const std::size_t header = scratch.size() + 9;  // file header and segment record header
        scratch.begin_segment().class_dump(s).end_segment();
        return test::byte_vector(scratch.bytes().begin() + static_cast<std::ptrdiff_t>(header), scratch.bytes().end());
    };
    struct damaged {
        const char* what;
        test::byte_vector bytes;
    };
    const damaged cases[] = {
        {"primitive array of type 3", values(id).u1(0x23).id(1).u4(0).u4(1).u1(3).u1(0).bytes()},
        {"primitive array of objects", values(id).u1(0x23).id(1).u4(0).u4(1).u1(2).id(0).bytes()},
        {"no-data array of type 12", values(id).u1(0xC3).id(1).u4(0).u4(1).u1(12).bytes()},
        {"constant of type 1", class_with(1, 10, 10)},
        {"static of type 0", class_with(10, 0, 10)},
        {"field of type 12", class_with(10, 10, 12)},
    };
    for (const damaged& d : cases) {
        SCOPED_TRACE(d.what);
        hprof_builder b(id);
        b.begin_segment().root_unknown(9);
        const std::uint64_t bad = b.size();
        b.raw_subrecord(d.bytes).end_segment();
        record_index idx = index_of(b);
        recorder v;
        auto r = walk_first(idx, v);
        ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, error_code::bad_value);
        EXPECT_EQ(r.error().offset, bad);
        EXPECT_TRUE(v.classes.empty() && v.primitive_arrays.empty());
    }
}

TEST_P(walker_test, walk_heap_goes_on_after_a_damaged_segment) {
    const unsigned id = GetParam();
    hprof_builder b(id);
    b.begin_segment().root_unknown(1);
    const std::uint64_t bad = b.size();
    b.raw_subrecord(values(id).u1(0x77).bytes()).end_segment();
    b.begin_segment().root_unknown(2).primitive_array(3, 8, 5).end_segment();
    record_index idx = index_of(b);
    recorder v;
    problem_list problems;
    walk_heap(idx, v, &problems);
    ASSERT_EQ(problems.kept().size(), 1u);
    EXPECT_EQ(problems.kept()[0].code, error_code::unknown_tag);
    EXPECT_EQ(problems.kept()[0].offset, bad);
    ASSERT_EQ(v.roots.size(), 2u);
    EXPECT_EQ(v.roots[1].object_id, 2u);
    ASSERT_EQ(v.primitive_arrays.size(), 1u);
    EXPECT_EQ(v.primitive_arrays[0].length, 5u);
}

TEST_P(walker_test, walk_heap_does_not_report_the_cut_of_a_truncated_file_again) {
    const unsigned id = GetParam();
    hprof_builder b(id);
    b.begin_segment().root_unknown(1).primitive_array(2, 10, 100).end_segment();
    b.truncate(b.size() - 10);
    record_index idx = index_of(b);
    ASSERT_TRUE(idx.truncated());
    ASSERT_EQ(idx.problems().size(), 1u);
    recorder v;
    problem_list problems;
    walk_heap(idx, v, &problems);
    EXPECT_TRUE(problems.empty());
    EXPECT_EQ(v.roots.size(), 1u);
    EXPECT_TRUE(v.primitive_arrays.empty());
}

INSTANTIATE_TEST_SUITE_P(id_sizes, walker_test, ::testing::Values(4u, 8u));

TEST(heap_records, tag_and_root_kind_names) {
    EXPECT_STREQ(heap_tag_name(0xFF), "ROOT_UNKNOWN");
    EXPECT_STREQ(heap_tag_name(0x08), "ROOT_THREAD_OBJECT");
    EXPECT_STREQ(heap_tag_name(0x20), "CLASS_DUMP");
    EXPECT_STREQ(heap_tag_name(0x23), "PRIM_ARRAY_DUMP");
    EXPECT_STREQ(heap_tag_name(0x90), "ROOT_UNREACHABLE");
    EXPECT_STREQ(heap_tag_name(0xC3), "PRIMITIVE_ARRAY_NODATA");
    EXPECT_STREQ(heap_tag_name(0xFE), "HEAP_DUMP_INFO");
    EXPECT_EQ(heap_tag_name(0x00), nullptr);
    EXPECT_EQ(heap_tag_name(0x8F), nullptr);
    EXPECT_STREQ(root_kind_name(root_kind::unknown), "unknown");
    EXPECT_STREQ(root_kind_name(root_kind::thread_object), "thread_object");
    EXPECT_STREQ(root_kind_name(root_kind::unreachable), "unreachable");
}

}  // namespace
}  // namespace heapd
