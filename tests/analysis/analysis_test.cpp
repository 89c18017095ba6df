// Tests of `heapd analyze` on synthetic dumps: the summary, histogram, largest objects, threads and
// old-agent records, and how damage, truncation and unknown records become problems.
#include "analysis/analysis.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <string>
#include <thread>
#include <vector>

#include "base/big_memory.h"
#include "base/unique_fd.h"
#include "formats/report/report_json.h"
#include "support/hprof_builder.h"
#include "support/jvm_process.h"

namespace heapd {
namespace {

using test::byte_vector;
using test::hprof_builder;
using test::values;

using counts = std::vector<std::pair<std::string, std::uint64_t>>;

constexpr std::uint8_t t_object = 2, t_boolean = 4, t_byte = 8, t_int = 10;
constexpr std::uint64_t object_class = 0x100, string_class = 0x101, thread_class = 0x102, point_class = 0x103,
                        object_array_class = 0x104;

// Names, classes, a frame and a trace; then a segment with the CLASS_DUMPs (left open).
void declare(hprof_builder& b) {
    const std::pair<std::uint64_t, const char*> classes[] = {{object_class, "java/lang/Object"},
                                                             {string_class, "java/lang/String"},
                                                             {thread_class, "java/lang/Thread"},
                                                             {point_class, "demo/Point"},
                                                             {object_array_class, "[Ljava/lang/Object;"}};
    std::uint32_t serial = 1;
    for (auto [id, name] : classes) {
        b.utf8(0x900 + serial, name).load_class(serial, id, 0, 0x900 + serial);
        ++serial;
    }
    b.utf8(1, "value").utf8(2, "coder").utf8(3, "hash").utf8(4, "name").utf8(5, "daemon").utf8(6, "threadStatus");
    b.utf8(7, "x").utf8(8, "y").utf8(9, "main").utf8(10, "([Ljava/lang/String;)V").utf8(11, "Main.java");
    b.frame(0x800, 9, 10, 11, 4, 10);
    b.trace(101, 1, {0x800});
    b.begin_segment();
    b.class_dump(object_class, 0, {});
    b.class_dump(string_class, object_class, {{1, t_object}, {2, t_byte}, {3, t_int}});
    b.class_dump(thread_class, object_class, {{4, t_object}, {5, t_boolean}, {6, t_int}});
    b.class_dump(point_class, object_class, {{7, t_int}, {8, t_int}});
    b.class_dump(object_array_class, object_class, {});
}

// Offsets of a few places in the fixture.
struct fixture_offsets {
    std::uint64_t second_segment = 0;
    std::uint64_t int_array = 0;
};

// Three Points, a Thread named "main" with its String, an Object[], an int[] over two segments.
hprof_builder fixture(fixture_offsets* at = nullptr) {
    hprof_builder b(8, "JAVA PROFILE 1.0.2", 1700000000123);
    declare(b);
    b.root_sticky_class(object_class).root_sticky_class(string_class);
    b.root_thread_object(0x5000, 1, 101).root_jni_global(0x1000, 0x77);
    b.instance(0x1000, point_class, values(8).u4(1).u4(2).bytes());
    b.instance(0x1001, point_class, values(8).u4(3).u4(4).bytes());
    b.instance(0x1002, point_class, values(8).u4(5).u4(6).bytes());
    b.instance(0x5000, thread_class, values(8).id(0x6000).u1(0).u4(0x5).bytes());
    b.instance(0x6000, string_class, values(8).id(0x7000).u1(0).u4(0).bytes());
    b.end_segment();
    if (at) at->second_segment = b.size();
    b.begin_segment();
    if (at) at->int_array = b.size();
    b.primitive_array(0x3000, t_int, 100);
    b.object_array(0x4000, object_array_class, {0x1000, 0x1001});
    b.primitive_array(0x7000, t_byte, 4, values().u1('m').u1('a').u1('i').u1('n').bytes());
    b.end_segment();
    b.heap_dump_end();
    return b;
}

analysis_report analyze(const hprof_builder& b, analysis_options o = {}) {
    auto r = analyze_dump(b.span(), o);
    EXPECT_TRUE(r.has_value()) << r.error().describe();
    return r ? *r : analysis_report{};
}

std::uint64_t instances_of(const analysis_report& r, std::string_view name) {
    for (const auto& e : r.histogram)
        if (e.class_name == name) return e.instances;
    return 0;
}

TEST(analyze_dump, summarises_a_sound_dump) {
    const hprof_builder b = fixture();
    analysis_options o;
    o.file_name = "/tmp/demo.hprof";
    const analysis_report r = analyze(b, o);
    const summary_report& s = r.summary;
    EXPECT_EQ(s.file, "/tmp/demo.hprof");
    EXPECT_EQ(s.file_bytes, b.size());
    EXPECT_EQ(s.format, "JAVA PROFILE 1.0.2");
    EXPECT_EQ(s.id_size, 8u);
    EXPECT_EQ(s.timestamp_ms, 1700000000123u);
    EXPECT_EQ(s.layout, "64-bit, compressed oops");
    EXPECT_FALSE(s.layout_inferred);  // ids 0x1000, 0x1001... are not addresses
    EXPECT_EQ(s.instances, 5u);
    EXPECT_EQ(s.object_arrays, 1u);
    EXPECT_EQ(s.primitive_arrays, 2u);
    EXPECT_EQ(s.classes, 5u);
    EXPECT_EQ(s.shallow_bytes, 416u + 3 * 24 + 4 * 24);
    EXPECT_EQ(s.records, (counts{{"UTF8", 16},
                                 {"LOAD_CLASS", 5},
                                 {"FRAME", 1},
                                 {"TRACE", 1},
                                 {"HEAP_DUMP_SEGMENT", 2},
                                 {"HEAP_DUMP_END", 1}}));
    EXPECT_EQ(s.subrecords, (counts{{"ROOT_JNI_GLOBAL", 1},
                                    {"ROOT_STICKY_CLASS", 2},
                                    {"ROOT_THREAD_OBJECT", 1},
                                    {"CLASS_DUMP", 5},
                                    {"INSTANCE_DUMP", 5},
                                    {"OBJ_ARRAY_DUMP", 1},
                                    {"PRIM_ARRAY_DUMP", 2}}));
    EXPECT_EQ(s.gc_roots, (counts{{"jni_global", 1}, {"sticky_class", 2}, {"thread_object", 1}}));
    EXPECT_TRUE(r.problems.empty());
    EXPECT_TRUE(r.legacy.empty());
}

TEST(analyze_dump, the_histogram_is_sorted_by_shallow_bytes_then_name) {
    const analysis_report r = analyze(fixture());
    struct row {
        const char* name;
        std::uint64_t class_id, instances, bytes;
    };
    const row want[] = {
        {"int[]", 0, 1, 416},
        {"demo.Point", point_class, 3, 72},
        {"byte[]", 0, 1, 24},
        {"java.lang.Object[]", object_array_class, 1, 24},
        {"java.lang.String", string_class, 1, 24},
        {"java.lang.Thread", thread_class, 1, 24},
    };
    ASSERT_EQ(r.histogram.size(), std::size(want));
    for (std::size_t i = 0; i < std::size(want); ++i) {
        SCOPED_TRACE(want[i].name);
        EXPECT_EQ(r.histogram[i].class_name, want[i].name);
        EXPECT_EQ(r.histogram[i].class_id, want[i].class_id);
        EXPECT_EQ(r.histogram[i].instances, want[i].instances);
        EXPECT_EQ(r.histogram[i].shallow_bytes, want[i].bytes);
    }
    const std::uint64_t want_ids[] = {0x3000, 0x1000, 0x1001, 0x1002, 0x4000, 0x5000, 0x6000, 0x7000};
    ASSERT_EQ(r.largest_objects.size(), std::size(want_ids));
    for (std::size_t i = 0; i < std::size(want_ids); ++i) EXPECT_EQ(r.largest_objects[i].id, want_ids[i]) << i;
    EXPECT_EQ(r.largest_objects[0].class_name, "int[]");
    EXPECT_EQ(r.largest_objects[0].shallow_bytes, 416u);
    EXPECT_EQ(r.largest_objects[0].length, 100u);
    EXPECT_TRUE(r.largest_objects[0].is_array);
    EXPECT_EQ(r.largest_objects[1].class_name, "demo.Point");
    EXPECT_FALSE(r.largest_objects[1].is_array);
}

TEST(analyze_dump, top_cuts_the_histogram_and_largest_cuts_the_objects) {
    const hprof_builder b = fixture();
    analysis_options o;
    o.top = 2;
    o.largest = 2;
    const analysis_report r = analyze(b, o);
    ASSERT_EQ(r.histogram.size(), 2u);
    EXPECT_EQ(r.histogram[0].class_name, "int[]");
    EXPECT_EQ(r.histogram[1].class_name, "demo.Point");
    ASSERT_EQ(r.largest_objects.size(), 2u);
    EXPECT_EQ(r.largest_objects[0].id, 0x3000u);
    EXPECT_EQ(r.largest_objects[1].id, 0x1000u);
    EXPECT_EQ(r.summary.shallow_bytes, 584u);  // the summary still covers every class

    o.top = 0;      // every histogram row
    o.largest = 0;  // no largest-object list
    const analysis_report all = analyze(b, o);
    EXPECT_EQ(all.histogram.size(), 6u);
    EXPECT_TRUE(all.largest_objects.empty());
}

TEST(analyze_dump, reports_threads_unless_asked_not_to) {
    const hprof_builder b = fixture();
    const analysis_report r = analyze(b);
    ASSERT_EQ(r.threads.size(), 1u);
    EXPECT_EQ(r.threads[0].name, "main");
    EXPECT_EQ(r.threads[0].state, "RUNNABLE");
    EXPECT_EQ(r.threads[0].daemon, false);
    EXPECT_EQ(r.threads[0].frames, std::vector<std::string>{"demo.Point.main(Main.java:10)"});
    analysis_options o;
    o.threads = false;
    EXPECT_TRUE(analyze(b, o).threads.empty());
}

TEST(analyze_dump, a_damaged_segment_is_a_problem_and_the_rest_is_still_counted) {
    hprof_builder b(8);
    declare(b);
    b.instance(0x1000, point_class, values(8).u4(1).u4(2).bytes());
    b.instance(0x1001, point_class, values(8).u4(1).u4(2).bytes());
    const std::uint64_t damage = b.size();
    b.raw_subrecord(values(8).u1(0x42).u8(0).bytes());
    b.instance(0x1002, point_class, values(8).u4(1).u4(2).bytes());  // lost behind the damage
    b.end_segment();
    b.begin_segment();
    b.instance(0x1003, point_class, values(8).u4(1).u4(2).bytes());
    b.primitive_array(0x3000, t_int, 2);
    b.end_segment();
    const analysis_report r = analyze(b);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_EQ(r.problems[0].message, "unknown heap sub-record tag 0x42");
    EXPECT_EQ(r.problems[0].offset, damage);
    EXPECT_FALSE(r.problems[0].truncation);
    EXPECT_EQ(r.summary.instances, 3u);
    EXPECT_EQ(r.summary.primitive_arrays, 1u);
    EXPECT_EQ(instances_of(r, "demo.Point"), 3u);
    EXPECT_EQ(r.summary.classes, 5u);
}

TEST(analyze_dump, a_truncated_file_is_a_truncation_problem_with_its_offset) {
    fixture_offsets at;
    hprof_builder b = fixture(&at);
    b.truncate(at.int_array + 100);  // inside the int[]'s data
    const analysis_report r = analyze(b);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_TRUE(r.problems[0].truncation);
    EXPECT_EQ(r.problems[0].offset, at.second_segment);
    EXPECT_TRUE(r.problems[0].message.starts_with("file ends inside a HEAP_DUMP_SEGMENT record"))
        << r.problems[0].message;
    EXPECT_EQ(r.summary.file_bytes, at.int_array + 100);
    EXPECT_EQ(r.summary.instances, 5u);
    EXPECT_EQ(r.summary.object_arrays, 0u);
    EXPECT_EQ(r.summary.primitive_arrays, 0u);
    EXPECT_EQ(r.summary.records,
              (counts{{"UTF8", 16}, {"LOAD_CLASS", 5}, {"FRAME", 1}, {"TRACE", 1}, {"HEAP_DUMP_SEGMENT", 2}}));
    ASSERT_EQ(r.threads.size(), 1u);
    EXPECT_EQ(r.threads[0].name, "<thread 1>");  // the name's byte[] was past the cut
    EXPECT_EQ(r.threads[0].state, "RUNNABLE");
}

TEST(analyze_dump, a_file_cut_inside_a_record_header_is_a_truncation_problem) {
    fixture_offsets at;
    hprof_builder b = fixture(&at);
    b.truncate(at.second_segment + 5);
    const analysis_report r = analyze(b);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_TRUE(r.problems[0].truncation);
    EXPECT_EQ(r.problems[0].offset, at.second_segment);
    EXPECT_EQ(r.summary.instances, 5u);
}

TEST(analyze_dump, an_unknown_top_level_record_is_a_problem_and_analysis_goes_on) {
    hprof_builder b(8);
    declare(b);
    b.instance(0x1000, point_class, values(8).u4(1).u4(2).bytes());
    b.end_segment();
    const std::uint64_t unknown = b.size();
    b.raw_record(0x55, values().u1(1).u1(2).u1(3).bytes());
    b.begin_segment();
    b.instance(0x1001, point_class, values(8).u4(1).u4(2).bytes());
    b.end_segment();
    const analysis_report r = analyze(b);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_EQ(r.problems[0].message, "unknown top-level record tag 0x55 skipped (3 bytes)");
    EXPECT_EQ(r.problems[0].offset, unknown);
    EXPECT_FALSE(r.problems[0].truncation);
    EXPECT_EQ(instances_of(r, "demo.Point"), 2u);
    EXPECT_EQ(
        r.summary.records,
        (counts{
            {"UTF8", 16}, {"LOAD_CLASS", 5}, {"FRAME", 1}, {"TRACE", 1}, {"HEAP_DUMP_SEGMENT", 2}, {"UNKNOWN_85", 1}}));
}

TEST(analyze_dump, an_unusable_header_is_an_error) {
    hprof_builder bad_magic(8, "JAVA PROFILX 1.0.2");
    auto r = analyze_dump(bad_magic.span(), {});
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, error_code::bad_magic);

    const byte_vector nothing;
    r = analyze_dump(nothing, {});
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, error_code::bad_magic);

    hprof_builder version(8, "JAVA PROFILE 2.0.0");
    r = analyze_dump(version.span(), {});
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, error_code::bad_header);

    hprof_builder id_size(6);
    r = analyze_dump(id_size.span(), {});
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, error_code::bad_header);
}

TEST(analyze_dump, a_header_alone_is_an_empty_report) {
    hprof_builder b(4, "JAVA PROFILE 1.0.1", 5000);
    const analysis_report r = analyze(b);
    EXPECT_EQ(r.summary.format, "JAVA PROFILE 1.0.1");
    EXPECT_EQ(r.summary.id_size, 4u);
    EXPECT_EQ(r.summary.timestamp_ms, 5000u);
    EXPECT_EQ(r.summary.layout, "32-bit");
    EXPECT_EQ(r.summary.instances, 0u);
    EXPECT_TRUE(r.summary.records.empty());
    EXPECT_TRUE(r.histogram.empty());
    EXPECT_TRUE(r.threads.empty());
    EXPECT_TRUE(r.problems.empty());
}

// Sites of an ALLOC_SITES body: (class serial, trace, live bytes, live instances).
byte_vector alloc_sites(std::uint32_t total_live, std::initializer_list<std::array<std::uint32_t, 4>> sites) {
    values v(4);
    v.u2(0).u4(0).u4(total_live).u4(100).u8(5000).u8(200).u4(static_cast<std::uint32_t>(sites.size()));
    for (const auto& s : sites) v.u1(0).u4(s[0]).u4(s[1]).u4(s[2]).u4(s[3]).u4(s[2] * 2).u4(s[3] * 2);
    return v.bytes();
}

TEST(analyze_dump, collects_the_old_agent_records) {
    hprof_builder b(4, "JAVA PROFILE 1.0.1");
    declare(b);
    b.end_segment();
    b.control_settings(3, 8);
    b.heap_summary(4096, 12, 8192, 20);
    b.alloc_sites(alloc_sites(999, {{1, 101, 1, 1}}));  // replaced by the next table
    b.alloc_sites(alloc_sites(600, {{4, 101, 100, 1}, {4, 102, 300, 3}, {2, 0, 200, 2}}));
    b.trace(102, 1, {}).trace(103, 1, {0x800, 0x801});
    b.cpu_samples(10, {{2, 101}, {7, 102}});
    b.cpu_samples(5, {{1, 999}, {4, 103}});
    const analysis_report r = analyze(b);
    EXPECT_TRUE(r.problems.empty());
    const legacy_report& l = r.legacy;
    EXPECT_FALSE(l.empty());
    EXPECT_EQ(l.control_flags, 3u);
    EXPECT_EQ(l.control_stack_depth, 8u);
    EXPECT_EQ(l.heap_summary_live, (std::pair<std::uint64_t, std::uint64_t>{4096, 12}));
    EXPECT_EQ(l.heap_summary_allocated, (std::pair<std::uint64_t, std::uint64_t>{8192, 20}));
    EXPECT_EQ(l.sites_total_live_bytes, 600u);
    EXPECT_EQ(l.sites_total_live_instances, 100u);
    ASSERT_EQ(l.alloc_sites.size(), 3u);  // by live bytes, descending
    EXPECT_EQ(l.alloc_sites[0].class_name, "demo.Point");
    EXPECT_EQ(l.alloc_sites[0].trace_serial, 102u);
    EXPECT_EQ(l.alloc_sites[0].live_bytes, 300u);
    EXPECT_EQ(l.alloc_sites[0].live_instances, 3u);
    EXPECT_EQ(l.alloc_sites[0].allocated_bytes, 600u);
    EXPECT_EQ(l.alloc_sites[0].allocated_instances, 6u);
    EXPECT_EQ(l.alloc_sites[1].class_name, "java.lang.String");
    EXPECT_EQ(l.alloc_sites[1].live_bytes, 200u);
    EXPECT_EQ(l.alloc_sites[2].class_name, "demo.Point");
    EXPECT_EQ(l.alloc_sites[2].live_bytes, 100u);
    EXPECT_EQ(l.cpu_total_samples, 15u);
    const std::vector<std::pair<std::uint64_t, std::string>> samples = {
        {7, "<trace 102>"},  // a trace without frames
        {4, "demo.Point.main(Main.java:10)"},
        {2, "demo.Point.main(Main.java:10)"},
        {1, "<trace 999>"},  // no such trace
    };
    EXPECT_EQ(l.cpu_samples, samples);
}

TEST(analyze_dump, a_short_old_agent_record_is_a_problem) {
    hprof_builder b(4, "JAVA PROFILE 1.0.1");
    b.control_settings(1, 4);
    const std::uint64_t bad = b.size();
    b.raw_record(0x07, values().u4(1).bytes());
    const analysis_report r = analyze(b);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_EQ(r.problems[0].message, "HEAP_SUMMARY record is shorter than its fields");
    EXPECT_EQ(r.problems[0].offset, bad);
    EXPECT_FALSE(r.problems[0].truncation);
    EXPECT_EQ(r.legacy.control_flags, 1u);
    EXPECT_FALSE(r.legacy.heap_summary_live.has_value());
}

TEST(analyze_dump, tells_each_phase_and_stops_when_asked) {
    const hprof_builder b = fixture();
    std::vector<std::string> seen;
    analysis_options o;
    o.phase_started = [&](std::string_view phase) {
        seen.emplace_back(phase);
        return true;
    };
    ASSERT_TRUE(analyze_dump(b.span(), o).has_value());
    EXPECT_EQ(seen, (std::vector<std::string>(std::begin(analysis_phases), std::end(analysis_phases))));
    for (std::string_view stop_at : analysis_phases) {
        seen.clear();
        o.phase_started = [&](std::string_view phase) {
            seen.emplace_back(phase);
            return phase != stop_at;
        };
        auto r = analyze_dump(b.span(), o);
        ASSERT_FALSE(r.has_value()) << stop_at;
        EXPECT_EQ(r.error().code, error_code::cancelled);
        EXPECT_EQ(seen.back(), stop_at);  // nothing after the phase that said stop
    }
}

// The waste report's walks run on a thread of their own beside the dominator tree when memory
// allows (the dump's bulk reads end on that thread), on the caller's where it is short or when
// options say so; the report is the same every way.
TEST(analyze_dump, the_waste_walks_run_beside_the_dominators_only_where_memory_allows) {
    const hprof_builder b = fixture();
    auto run = [&b](bool beside, std::thread::id& reads_ended_on) {
        analysis_options o;
        o.waste_beside_dominators = beside;
        o.bulk_reads_done = [&reads_ended_on] { reads_ended_on = std::this_thread::get_id(); };
        auto r = analyze_dump(b.span(), o);
        EXPECT_TRUE(r.has_value());
        return r ? to_json(*r).dump() : std::string();
    };
    std::thread::id beside, serial, short_of_memory;
    const std::string report = run(true, beside);
    EXPECT_NE(beside, std::this_thread::get_id());
    EXPECT_NE(beside, std::thread::id{});
    EXPECT_EQ(run(false, serial), report);
    EXPECT_EQ(serial, std::this_thread::get_id());
    {
        // Big arrays beyond a budget of nothing go to a file: no room for the waste walks beside.
        test::scratch_dir dir;
        unique_fd spill(::open(dir.path().c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
        ASSERT_TRUE(spill);
        big_memory::spill_to(spill.get(), 0);
        const std::string small = run(true, short_of_memory);
        big_memory::spill_to(-1, 0);
        EXPECT_EQ(small, report);
        EXPECT_EQ(short_of_memory, std::this_thread::get_id());
    }
}

}  // namespace
}  // namespace heapd
