// Tests of the one-pass index over top-level records.
#include "formats/hprof/record_index.h"

#include <gtest/gtest.h>

#include "formats/hprof/big_endian.h"
#include "support/hprof_builder.h"

namespace heapd {
namespace {

using test::hprof_builder;

// Builds the reader and the index over a builder's bytes (the builder must outlive both).
record_index index_of(const hprof_builder& b, unsigned dump = last_heap_dump) {
    auto r = hprof_reader::parse(b.span());
    EXPECT_TRUE(r.has_value());
    return record_index::build(*r, dump);
}

class record_index_test : public ::testing::TestWithParam<unsigned> {};

TEST_P(record_index_test, resolves_names_classes_frames_traces_and_threads) {
    const unsigned id = GetParam();
    hprof_builder b(id);
    b.utf8(0x100, "java/lang/Thread").utf8(0x101, "run").utf8(0x102, "()V").utf8(0x103, "Thread.java");
    b.utf8(0x104, "main").utf8(0x105, "system").utf8(0x106, "");
    b.load_class(7, 0x5000, 0, 0x100);
    b.load_class(8, 0x5010, 3, 0x104);
    b.frame(0x900, 0x101, 0x102, 0x103, 7, 833);
    b.frame(0x901, 0x101, 0x102, 0x103, 7, -3);
    b.trace(3, 1, {0x901, 0x900});
    b.trace(4, 2, {});
    b.start_thread(1, 0x7000, 3, 0x104, 0x105, 0x106);
    b.end_thread(1);
    b.unload_class(8);
    record_index idx = index_of(b);

    EXPECT_EQ(idx.id_size(), id);
    EXPECT_TRUE(idx.problems().empty());
    EXPECT_FALSE(idx.truncated());
    EXPECT_EQ(idx.utf8(0x100), "java/lang/Thread");
    EXPECT_EQ(idx.utf8(0x106), "");
    EXPECT_EQ(idx.utf8(0x999), "");
    EXPECT_EQ(idx.class_name(0x5000), "java/lang/Thread");
    EXPECT_EQ(idx.class_name(0x5010), "main");
    EXPECT_EQ(idx.class_name(0x1234), "");

    const loaded_class* c = idx.class_by_serial(8);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->serial, 8u);
    EXPECT_EQ(c->class_id, 0x5010u);
    EXPECT_EQ(c->trace_serial, 3u);
    EXPECT_EQ(c->name_id, 0x104u);
    EXPECT_EQ(idx.class_by_serial(9), nullptr);
    ASSERT_EQ(idx.classes().size(), 2u);
    EXPECT_EQ(idx.classes()[0].class_id, 0x5000u);

    const frame_info* f = idx.frame(0x901);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->method_name_id, 0x101u);
    EXPECT_EQ(f->signature_id, 0x102u);
    EXPECT_EQ(f->source_file_id, 0x103u);
    EXPECT_EQ(f->class_serial, 7u);
    EXPECT_EQ(f->line, -3);
    EXPECT_EQ(idx.frame(0x900)->line, 833);
    EXPECT_EQ(idx.frame(0x902), nullptr);

    const trace_info* t = idx.trace(3);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->serial, 3u);
    EXPECT_EQ(t->thread_serial, 1u);
    ASSERT_EQ(t->frame_ids.size(), 2u * id);
    EXPECT_EQ(be::id(t->frame_ids.data(), id), 0x901u);
    EXPECT_EQ(be::id(t->frame_ids.data() + id, id), 0x900u);
    ASSERT_NE(idx.trace(4), nullptr);
    EXPECT_TRUE(idx.trace(4)->frame_ids.empty());
    EXPECT_EQ(idx.trace(5), nullptr);
    EXPECT_EQ(idx.traces().size(), 2u);

    ASSERT_EQ(idx.started_threads().size(), 1u);
    const started_thread& s = idx.started_threads()[0];
    EXPECT_EQ(s.serial, 1u);
    EXPECT_EQ(s.object_id, 0x7000u);
    EXPECT_EQ(s.trace_serial, 3u);
    EXPECT_EQ(s.name_id, 0x104u);
    EXPECT_EQ(s.group_name_id, 0x105u);
    EXPECT_EQ(s.parent_group_name_id, 0x106u);

    EXPECT_EQ(idx.count(record_tag::utf8), 7u);
    EXPECT_EQ(idx.count(record_tag::load_class), 2u);
    EXPECT_EQ(idx.count(record_tag::frame), 2u);
    EXPECT_EQ(idx.count(record_tag::trace), 2u);
    EXPECT_EQ(idx.count(record_tag::start_thread), 1u);
    EXPECT_EQ(idx.count(record_tag::end_thread), 1u);
    EXPECT_EQ(idx.count(record_tag::unload_class), 1u);
    EXPECT_EQ(idx.count(record_tag::heap_dump_segment), 0u);
}

INSTANTIATE_TEST_SUITE_P(id_sizes, record_index_test, ::testing::Values(4u, 8u));

TEST(record_index, counts_every_tag_and_keeps_heap_and_legacy_records) {
    hprof_builder b(8);
    b.control_settings(2, 4);
    b.heap_summary(100, 10, 1000, 50);
    b.cpu_samples(3, {{2, 1}, {1, 2}});
    b.alloc_sites(test::values(8).u2(0).u4(0).u4(0).u4(0).u8(0).u8(0).u4(0).bytes());
    const std::uint64_t seg0 = b.size();
    b.begin_segment(0x0C).root_unknown(1).end_segment();
    const std::uint64_t seg1 = b.size();
    b.begin_segment().root_sticky_class(2).end_segment();
    b.begin_segment().end_segment();
    b.heap_dump_end();
    // A HEAP_DUMP, then a run of segments: two heap dumps, walked as one.
    record_index idx = index_of(b, every_heap_dump);

    EXPECT_TRUE(idx.problems().empty());
    EXPECT_EQ(idx.heap_dump_count(), 2u);
    EXPECT_EQ(idx.count(record_tag::control_settings), 1u);
    EXPECT_EQ(idx.count(record_tag::heap_summary), 1u);
    EXPECT_EQ(idx.count(record_tag::cpu_samples), 1u);
    EXPECT_EQ(idx.count(record_tag::alloc_sites), 1u);
    EXPECT_EQ(idx.count(record_tag::heap_dump), 1u);
    EXPECT_EQ(idx.count(record_tag::heap_dump_segment), 2u);
    EXPECT_EQ(idx.count(record_tag::heap_dump_end), 1u);
    EXPECT_EQ(idx.record_counts()[0x1C], 2u);
    std::uint64_t total = 0;
    for (auto n : idx.record_counts()) total += n;
    EXPECT_EQ(total, 8u);

    ASSERT_EQ(idx.heap_records().size(), 3u);
    EXPECT_EQ(idx.heap_records()[0].tag, 0x0C);
    EXPECT_EQ(idx.heap_records()[0].offset, seg0);
    EXPECT_EQ(idx.heap_records()[0].body.size(), 9u);
    EXPECT_EQ(idx.heap_records()[1].tag, 0x1C);
    EXPECT_EQ(idx.heap_records()[1].offset, seg1);
    EXPECT_TRUE(idx.heap_records()[2].body.empty());

    ASSERT_EQ(idx.legacy_records().size(), 4u);
    EXPECT_EQ(idx.legacy_records()[0].tag, 0x0E);
    EXPECT_EQ(idx.legacy_records()[1].tag, 0x07);
    EXPECT_EQ(idx.legacy_records()[2].tag, 0x0D);
    EXPECT_EQ(idx.legacy_records()[3].tag, 0x06);
    EXPECT_EQ(idx.legacy_records()[2].body.size(), 8u + 2 * 8u);
}

// A file as the old hprof agent writes it when it dumps twice: one set of names, classes and
// traces, then a heap dump each time (here a HEAP_DUMP, then a run of segments, then one more),
// with a class loaded and a trace redefined between them.
TEST(record_index, each_heap_dump_of_a_file_holding_several_is_chosen_by_its_number) {
    hprof_builder b(8);
    b.utf8(1, "First").utf8(2, "Later").load_class(1, 0x100, 0, 1);
    b.trace(5, 1, {});
    const std::uint64_t first = b.size();
    b.begin_segment(0x0C).root_unknown(0x100).end_segment();
    b.utf8(1, "Renamed").load_class(2, 0x200, 0, 2);
    b.frame(0x900, 1, 1, 1, 1, 7).trace(5, 1, {0x900});
    const std::uint64_t second = b.size();
    b.begin_segment().root_unknown(0x200).end_segment();
    b.begin_segment().root_unknown(0x201).end_segment();
    b.heap_dump_end();
    const std::uint64_t third = b.size();
    b.begin_segment().root_unknown(0x300).end_segment();  // the last run has no HEAP_DUMP_END: cut short

    record_index last = index_of(b), one = index_of(b, 1), two = index_of(b, 2), three = index_of(b, 3);
    for (const record_index* idx : {&last, &one, &two, &three}) EXPECT_EQ(idx->heap_dump_count(), 3u);
    EXPECT_EQ(last.heap_dump_number(), 3u);
    ASSERT_EQ(last.heap_records().size(), 1u);
    EXPECT_EQ(last.heap_records()[0].offset, third);
    EXPECT_EQ(three.heap_records()[0].offset, third);
    ASSERT_EQ(one.heap_records().size(), 1u);
    EXPECT_EQ(one.heap_dump_number(), 1u);
    EXPECT_EQ(one.heap_records()[0].offset, first);
    ASSERT_EQ(two.heap_records().size(), 2u);
    EXPECT_EQ(two.heap_records()[0].offset, second);

    // Each dump means what was defined before it, the latest definition first.
    EXPECT_EQ(one.utf8(1), "First");
    EXPECT_EQ(one.class_name(0x200), "");
    ASSERT_NE(one.trace(5), nullptr);
    EXPECT_TRUE(one.trace(5)->frame_ids.empty());
    EXPECT_EQ(two.utf8(1), "Renamed");
    EXPECT_EQ(two.class_name(0x200), "Later");
    ASSERT_NE(two.trace(5), nullptr);
    EXPECT_EQ(two.trace(5)->frame_ids.size(), 8u);
    EXPECT_EQ(last.utf8(1), "Renamed");

    // No such dump: no heap records; every_heap_dump walks them all.
    record_index four = index_of(b, 4), all = index_of(b, every_heap_dump);
    EXPECT_EQ(four.heap_dump_number(), 0u);
    EXPECT_TRUE(four.heap_records().empty());
    EXPECT_EQ(all.heap_records().size(), 4u);
    EXPECT_EQ(all.heap_dump_number(), 0u);
}

TEST(record_index, file_cut_inside_a_record_is_truncated_with_the_offset) {
    hprof_builder b(8);
    b.utf8(1, "kept");
    b.load_class(1, 0x10, 0, 1);
    const std::uint64_t seg = b.size();
    b.begin_segment().root_unknown(5).root_unknown(6).end_segment();
    b.truncate(b.size() - 3);
    record_index idx = index_of(b);

    EXPECT_TRUE(idx.truncated());
    ASSERT_EQ(idx.problems().size(), 1u);
    EXPECT_EQ(idx.problems()[0].code, error_code::out_of_bounds);
    EXPECT_EQ(idx.problems()[0].offset, seg);
    EXPECT_NE(idx.problems()[0].message.find("HEAP_DUMP_SEGMENT"), std::string::npos);
    // What came before the cut is indexed, and the cut record is kept with what it holds.
    EXPECT_EQ(idx.class_name(0x10), "kept");
    ASSERT_EQ(idx.heap_records().size(), 1u);
    EXPECT_TRUE(idx.heap_records()[0].truncated);
    EXPECT_EQ(idx.heap_records()[0].body.size(), 2u * 9u - 3u);
}

TEST(record_index, file_cut_inside_a_record_header_is_truncated_with_the_offset) {
    hprof_builder b(4);
    b.utf8(1, "x");
    const std::uint64_t at = b.size();
    b.utf8(2, "y");
    b.truncate(at + 8);
    record_index idx = index_of(b);
    EXPECT_TRUE(idx.truncated());
    ASSERT_EQ(idx.problems().size(), 1u);
    EXPECT_EQ(idx.problems()[0].code, error_code::out_of_bounds);
    EXPECT_EQ(idx.problems()[0].offset, at);
    EXPECT_EQ(idx.count(record_tag::utf8), 1u);
    EXPECT_EQ(idx.utf8(1), "x");
}

TEST(record_index, unknown_top_level_tag_is_skipped_with_a_problem) {
    hprof_builder b(8);
    b.utf8(1, "before");
    const std::uint64_t at = b.size();
    b.raw_record(0x42, test::values(8).u8(0xFFFF).u4(1).bytes());
    b.utf8(2, "after");
    record_index idx = index_of(b);

    EXPECT_FALSE(idx.truncated());
    ASSERT_EQ(idx.problems().size(), 1u);
    EXPECT_EQ(idx.problems()[0].code, error_code::unknown_tag);
    EXPECT_EQ(idx.problems()[0].offset, at);
    EXPECT_NE(idx.problems()[0].message.find("0x42"), std::string::npos) << idx.problems()[0].message;
    EXPECT_NE(idx.problems()[0].message.find("12 bytes"), std::string::npos) << idx.problems()[0].message;
    EXPECT_EQ(idx.record_counts()[0x42], 1u);
    EXPECT_EQ(idx.utf8(2), "after");
}

TEST(record_index, records_shorter_than_their_fields_are_problems) {
    hprof_builder b(8);
    const std::uint64_t load = b.size();
    b.raw_record(0x02, test::values(8).u4(1).u8(0x10).bytes());  // no trace serial, no name
    const std::uint64_t trace = b.size();
    b.raw_record(0x05, test::values(8).u4(1).u4(1).u4(3).u8(0x900).bytes());  // 3 frames, holds 1
    b.utf8(5, "still read");
    record_index idx = index_of(b);

    EXPECT_FALSE(idx.truncated());
    ASSERT_EQ(idx.problems().size(), 2u);
    EXPECT_EQ(idx.problems()[0].code, error_code::bad_value);
    EXPECT_EQ(idx.problems()[0].offset, load);
    EXPECT_NE(idx.problems()[0].message.find("LOAD_CLASS"), std::string::npos) << idx.problems()[0].message;
    EXPECT_EQ(idx.problems()[1].code, error_code::bad_value);
    EXPECT_EQ(idx.problems()[1].offset, trace);
    EXPECT_TRUE(idx.classes().empty());
    EXPECT_EQ(idx.trace(1), nullptr);
    EXPECT_EQ(idx.utf8(5), "still read");
}

TEST(record_index, header_only_file_is_empty_and_sound) {
    hprof_builder b(8);
    record_index idx = index_of(b);
    EXPECT_TRUE(idx.problems().empty());
    EXPECT_FALSE(idx.truncated());
    for (auto n : idx.record_counts()) EXPECT_EQ(n, 0u);
    EXPECT_TRUE(idx.heap_records().empty());
}

}  // namespace
}  // namespace heapd
