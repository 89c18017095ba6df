// Tests of the old hprof agent's records: ALLOC_SITES, CPU_SAMPLES, HEAP_SUMMARY, CONTROL_SETTINGS,
// synthetic and in the peer dump that the agent wrote.
#include "formats/hprof/legacy_records.h"

#include <gtest/gtest.h>

#include <bit>
#include <optional>
#include <string>

#include "formats/hprof/mapped_file.h"
#include "support/hprof_builder.h"

namespace heapd {
namespace {

using test::byte_vector;
using test::hprof_builder;
using test::values;

// The index of a builder's bytes and its legacy records (the builder must outlive it).
struct indexed {
    explicit indexed(const hprof_builder& b)
        : reader(*hprof_reader::parse(b.span())), idx(record_index::build(reader)) {}
    const hprof_record& legacy(std::size_t i) const { return idx.legacy_records().at(i); }
    hprof_reader reader;
    record_index idx;
};

// One site of an ALLOC_SITES body.
struct site_row {
    std::uint8_t array_type;
    std::uint32_t class_serial, trace, live_bytes, live_instances, allocated_bytes, allocated_instances;
};

byte_vector alloc_sites_body(std::uint16_t flags, float cutoff, std::uint32_t live_bytes, std::uint32_t live_instances,
                             std::uint64_t allocated_bytes, std::uint64_t allocated_instances,
                             std::initializer_list<site_row> sites,
                             std::optional<std::uint32_t> declared = std::nullopt) {
    values v;
    v.u2(flags).u4(std::bit_cast<std::uint32_t>(cutoff)).u4(live_bytes).u4(live_instances);
    v.u8(allocated_bytes).u8(allocated_instances);
    v.u4(declared.value_or(static_cast<std::uint32_t>(sites.size())));
    for (const site_row& s : sites)
        v.u1(s.array_type)
            .u4(s.class_serial)
            .u4(s.trace)
            .u4(s.live_bytes)
            .u4(s.live_instances)
            .u4(s.allocated_bytes)
            .u4(s.allocated_instances);
    return v.bytes();
}

TEST(decode_alloc_sites, decodes_the_header_and_every_site_with_class_names) {
    hprof_builder b(4, "JAVA PROFILE 1.0.1");
    b.utf8(1, "demo/Widget").load_class(5, 0x100, 0, 1);
    b.utf8(2, "[Ljava/lang/String;").load_class(6, 0x101, 0, 2);
    b.alloc_sites(alloc_sites_body(0x0003, 0.25f, 5000, 40, 0x1'0000'0001, 0x2'0000'0002,
                                   {{0, 5, 11, 3000, 30, 9000, 90},
                                    {10, 0, 12, 1200, 4, 2400, 8},  // int[]: no LOAD_CLASS
                                    {2, 6, 13, 500, 5, 500, 5},
                                    {0, 77, 14, 300, 1, 0xFFFFFFFF, 0xFFFFFFFE}}));
    indexed d(b);
    ASSERT_EQ(d.idx.legacy_records().size(), 1u);
    auto t = decode_alloc_sites(d.legacy(0), d.idx);
    ASSERT_TRUE(t.has_value()) << t.error().describe();
    EXPECT_EQ(t->flags, 0x0003u);
    EXPECT_EQ(t->cutoff_ratio, 0.25f);
    EXPECT_EQ(t->total_live_bytes, 5000u);
    EXPECT_EQ(t->total_live_instances, 40u);
    EXPECT_EQ(t->total_allocated_bytes, 0x1'0000'0001u);
    EXPECT_EQ(t->total_allocated_instances, 0x2'0000'0002u);
    ASSERT_EQ(t->sites.size(), 4u);
    const struct {
        const char* name;
        std::uint8_t type;
        std::uint32_t trace, lb, li, ab, ai;
    } want[] = {
        {"demo.Widget", 0, 11, 3000, 30, 9000, 90},
        {"int[]", 10, 12, 1200, 4, 2400, 8},
        {"java.lang.String[]", 2, 13, 500, 5, 500, 5},
        {"<class serial 77>", 0, 14, 300, 1, 0xFFFFFFFF, 0xFFFFFFFE},
    };
    for (std::size_t i = 0; i < 4; ++i) {
        SCOPED_TRACE(i);
        const alloc_site& s = t->sites[i];
        EXPECT_EQ(s.class_name, want[i].name);
        EXPECT_EQ(s.array_type, want[i].type);
        EXPECT_EQ(s.trace_serial, want[i].trace);
        EXPECT_EQ(s.live_bytes, want[i].lb);
        EXPECT_EQ(s.live_instances, want[i].li);
        EXPECT_EQ(s.allocated_bytes, want[i].ab);
        EXPECT_EQ(s.allocated_instances, want[i].ai);
    }
}

TEST(decode_alloc_sites, an_empty_table_decodes) {
    hprof_builder b(8);
    b.alloc_sites(alloc_sites_body(0, 0.0f, 0, 0, 0, 0, {}));
    indexed d(b);
    auto t = decode_alloc_sites(d.legacy(0), d.idx);
    ASSERT_TRUE(t.has_value()) << t.error().describe();
    EXPECT_TRUE(t->sites.empty());
}

TEST(decode_alloc_sites, short_bodies_are_errors) {
    hprof_builder b(8);
    byte_vector head = alloc_sites_body(0, 0.5f, 1, 1, 1, 1, {});
    head.pop_back();  // 33 bytes: no room for the site count
    const std::uint64_t first = b.size();
    b.alloc_sites(head);
    const std::uint64_t second = b.size();
    byte_vector missing_site = alloc_sites_body(0, 0.5f, 1, 1, 1, 1, {{0, 1, 1, 1, 1, 1, 1}}, 2);
    b.alloc_sites(missing_site);
    byte_vector cut_site = alloc_sites_body(0, 0.5f, 1, 1, 1, 1, {{0, 1, 1, 1, 1, 1, 1}});
    cut_site.pop_back();
    b.alloc_sites(cut_site);
    b.alloc_sites(alloc_sites_body(0, 0.5f, 1, 1, 1, 1, {{0, 1, 1, 1, 1, 1, 1}}, 0xFFFFFFFF));
    b.alloc_sites({});
    indexed d(b);
    ASSERT_EQ(d.idx.legacy_records().size(), 5u);
    for (std::size_t i = 0; i < 5; ++i) {
        SCOPED_TRACE(i);
        auto t = decode_alloc_sites(d.legacy(i), d.idx);
        ASSERT_FALSE(t.has_value());
        EXPECT_EQ(t.error().code, error_code::out_of_bounds);
        EXPECT_EQ(t.error().message, "ALLOC_SITES record is shorter than its fields");
        EXPECT_EQ(t.error().offset, d.legacy(i).offset);
    }
    EXPECT_EQ(d.legacy(0).offset, first);
    EXPECT_EQ(d.legacy(1).offset, second);
}

TEST(decode_cpu_samples, decodes_samples_per_trace) {
    hprof_builder b(8);
    b.cpu_samples(10, {{7, 101}, {3, 102}, {0, 0xFFFFFFFF}});
    b.cpu_samples(0, {});
    indexed d(b);
    auto t = decode_cpu_samples(d.legacy(0));
    ASSERT_TRUE(t.has_value()) << t.error().describe();
    EXPECT_EQ(t->total_samples, 10u);
    const std::vector<std::pair<std::uint32_t, std::uint32_t>> want = {{7, 101}, {3, 102}, {0, 0xFFFFFFFF}};
    EXPECT_EQ(t->traces, want);
    auto empty = decode_cpu_samples(d.legacy(1));
    ASSERT_TRUE(empty.has_value());
    EXPECT_EQ(empty->total_samples, 0u);
    EXPECT_TRUE(empty->traces.empty());
}

TEST(decode_cpu_samples, short_bodies_are_errors) {
    hprof_builder b(8);
    b.raw_record(0x0D, values().u4(1).u2(0).u1(0).bytes());                   // 7 bytes
    b.raw_record(0x0D, values().u4(5).u4(2).u4(5).u4(101).bytes());           // 2 declared, 1 present
    b.raw_record(0x0D, values().u4(5).u4(1).u4(5).u2(0).bytes());             // a cut entry
    b.raw_record(0x0D, values().u4(5).u4(0x20000000).u4(5).u4(101).bytes());  // a count that would wrap
    indexed d(b);
    ASSERT_EQ(d.idx.legacy_records().size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) {
        SCOPED_TRACE(i);
        auto t = decode_cpu_samples(d.legacy(i));
        ASSERT_FALSE(t.has_value());
        EXPECT_EQ(t.error().code, error_code::out_of_bounds);
        EXPECT_EQ(t.error().message, "CPU_SAMPLES record is shorter than its fields");
        EXPECT_EQ(t.error().offset, d.legacy(i).offset);
    }
}

TEST(decode_heap_summary, decodes_live_and_allocated_totals) {
    hprof_builder b(8);
    b.heap_summary(4096, 12, 0x1'2345'6789, 0xFFFF'FFFF'FFFF'FFFF);
    b.raw_record(0x07, values().u4(1).u4(2).u8(3).u4(0).u2(0).u1(0).bytes());  // 23 bytes
    indexed d(b);
    auto t = decode_heap_summary(d.legacy(0));
    ASSERT_TRUE(t.has_value()) << t.error().describe();
    EXPECT_EQ(t->live_bytes, 4096u);
    EXPECT_EQ(t->live_instances, 12u);
    EXPECT_EQ(t->allocated_bytes, 0x1'2345'6789u);
    EXPECT_EQ(t->allocated_instances, 0xFFFF'FFFF'FFFF'FFFFu);
    auto bad = decode_heap_summary(d.legacy(1));
    ASSERT_FALSE(bad.has_value());
    EXPECT_EQ(bad.error().code, error_code::out_of_bounds);
    EXPECT_EQ(bad.error().message, "HEAP_SUMMARY record is shorter than its fields");
    EXPECT_EQ(bad.error().offset, d.legacy(1).offset);
}

TEST(decode_control_settings, decodes_flags_and_stack_depth) {
    hprof_builder b(8);
    b.control_settings(0x3, 16);
    b.raw_record(0x0E, values().u4(1).u1(0).bytes());  // 5 bytes
    indexed d(b);
    auto t = decode_control_settings(d.legacy(0));
    ASSERT_TRUE(t.has_value()) << t.error().describe();
    EXPECT_EQ(t->flags, 3u);
    EXPECT_EQ(t->stack_depth, 16u);
    auto bad = decode_control_settings(d.legacy(1));
    ASSERT_FALSE(bad.has_value());
    EXPECT_EQ(bad.error().code, error_code::out_of_bounds);
    EXPECT_EQ(bad.error().message, "CONTROL_SETTINGS record is shorter than its fields");
}

TEST(legacy_records, the_peer_dump_of_the_old_agent) {
    auto file = mapped_file::open(std::string(HEAPD_PEER_DATA) + "/hprof-32.bin");
    ASSERT_TRUE(file.has_value()) << file.error().describe();
    auto reader = hprof_reader::parse(file->bytes());
    ASSERT_TRUE(reader.has_value());
    record_index idx = record_index::build(*reader);
    const hprof_record* sites_rec = nullptr;
    const hprof_record* control_rec = nullptr;
    for (const hprof_record& r : idx.legacy_records()) {
        if (r.tag == 0x06) {
            EXPECT_EQ(sites_rec, nullptr) << "one ALLOC_SITES record";
            sites_rec = &r;
        }
        if (r.tag == 0x0E) control_rec = &r;
    }
    ASSERT_EQ(idx.legacy_records().size(), 2u);
    ASSERT_NE(sites_rec, nullptr);
    ASSERT_NE(control_rec, nullptr);

    auto control = decode_control_settings(*control_rec);
    ASSERT_TRUE(control.has_value());
    EXPECT_EQ(control->flags, 1u);  // allocation traces on, CPU sampling off
    EXPECT_EQ(control->stack_depth, 4u);

    auto t = decode_alloc_sites(*sites_rec, idx);
    ASSERT_TRUE(t.has_value()) << t.error().describe();
    ASSERT_EQ(t->sites.size(), 464u);
    EXPECT_EQ(sites_rec->body.size(), 34u + 25 * 464);
    EXPECT_EQ(t->flags, 0u);
    EXPECT_EQ(t->total_live_bytes, 292864u);
    EXPECT_EQ(t->total_live_instances, 2926u);
    EXPECT_EQ(t->total_allocated_bytes, 292864u);
    EXPECT_EQ(t->total_allocated_instances, 2926u);

    // The agent leaves out sites below its cutoff, so the sites sum to less than the totals; and with
    // no garbage collected yet every allocated object is still live.
    std::uint64_t live = 0, instances = 0;
    for (const alloc_site& s : t->sites) {
        live += s.live_bytes;
        instances += s.live_instances;
        EXPECT_EQ(s.allocated_bytes, s.live_bytes);
        EXPECT_EQ(s.allocated_instances, s.live_instances);
        EXPECT_FALSE(s.class_name.starts_with("<class serial")) << s.class_name;
    }
    EXPECT_EQ(live, 291416u);
    EXPECT_EQ(instances, 2853u);
    EXPECT_LE(live, t->total_live_bytes);
    // Written largest first.
    for (std::size_t i = 1; i < t->sites.size(); ++i)
        EXPECT_GE(t->sites[i - 1].live_bytes, t->sites[i].live_bytes) << i;

    const struct {
        const char* name;
        std::uint8_t type;
        std::uint32_t trace, bytes, count;
    } head[] = {
        {"char[]", 5, 300000, 63496, 692},
        {"byte[]", 8, 300000, 25352, 9},
        {"java.lang.String", 0, 300000, 17216, 702},
        {"java.lang.Object[]", 2, 300000, 12440, 304},
    };
    for (std::size_t i = 0; i < std::size(head); ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(t->sites[i].class_name, head[i].name);
        EXPECT_EQ(t->sites[i].array_type, head[i].type);
        EXPECT_EQ(t->sites[i].trace_serial, head[i].trace);
        EXPECT_EQ(t->sites[i].live_bytes, head[i].bytes);
        EXPECT_EQ(t->sites[i].live_instances, head[i].count);
    }
    EXPECT_EQ(t->sites.back().class_name, "java.io.FilePermission");
    EXPECT_EQ(t->sites.back().trace_serial, 300147u);
}

}  // namespace
}  // namespace heapd
