// Tests of the hsperfdata reader on synthetic files: prologue and entries in both byte orders,
// values read in place, entries added while the JVM runs, and damaged, truncated or garbage input.
#include "formats/hsperf/hsperfdata.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "formats/hprof/mapped_file.h"
#include "support/hsperf_builder.h"
#include "support/jvm_process.h"

namespace heapd {
namespace {

using test::hsperf_builder;

hsperf_builder sample(bool little_endian = true) {
    hsperf_builder b(little_endian);
    b.add_long("sun.os.hrt.frequency", 1000000000, hsperf_builder::units_hertz, hsperf_builder::constant)
        .add_string("sun.rt.javaCommand", "com.example.Main --port 8080")
        .add_long("sun.gc.generation.0.space.0.used", 123456789)
        .add_string("java.rt.vmArgs", "-Xmx1g", 64)
        .add_long("sun.gc.collector.0.invocations", -5, hsperf_builder::units_events, hsperf_builder::monotonic);
    return b;
}

std::span<const std::byte> span_of(const std::vector<std::byte>& v) { return {v.data(), v.size()}; }

void expect_sample(const std::vector<std::byte>& file, bool little_endian) {
    auto data = hsperf_data::parse(span_of(file));
    ASSERT_TRUE(data) << data.error().describe();
    auto p = data->prologue();
    EXPECT_EQ(p.little_endian, little_endian);
    EXPECT_EQ(p.major, 2);
    EXPECT_EQ(p.minor, 0);
    EXPECT_TRUE(p.accessible);
    EXPECT_EQ(p.entry_offset, 32u);
    EXPECT_EQ(p.num_entries, 5u);
    EXPECT_EQ(p.mod_time_stamp, 1234567);
    auto snap = data->snapshot();
    ASSERT_TRUE(snap) << snap.error().describe();
    EXPECT_TRUE(snap->complete());
    ASSERT_EQ(snap->entries().size(), 5u);
    EXPECT_EQ(snap->long_value("sun.os.hrt.frequency"), 1000000000);
    EXPECT_EQ(snap->long_value("sun.gc.generation.0.space.0.used"), 123456789);
    EXPECT_EQ(snap->long_value("sun.gc.collector.0.invocations"), -5);
    EXPECT_EQ(snap->string_value("sun.rt.javaCommand"), "com.example.Main --port 8080");
    EXPECT_EQ(snap->string_value("java.rt.vmArgs"), "-Xmx1g");  // NUL padding trimmed
    EXPECT_FALSE(snap->long_value("sun.rt.javaCommand"));       // a string is no long
    EXPECT_FALSE(snap->string_value("sun.os.hrt.frequency"));
    EXPECT_EQ(snap->find("no.such.counter"), nullptr);
    const hsperf_entry* f = snap->find("sun.os.hrt.frequency");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->type, 'J');
    EXPECT_EQ(f->units, static_cast<std::uint8_t>(hsperf_units::hertz));
    EXPECT_EQ(f->variability, static_cast<std::uint8_t>(hsperf_variability::constant));
    EXPECT_EQ(f->offset, 32u);
    const hsperf_entry* args = snap->find("java.rt.vmArgs");
    ASSERT_NE(args, nullptr);
    EXPECT_EQ(args->vector_length, 64u);
    EXPECT_EQ(args->data.size(), 64u);
    auto gc = snap->with_prefix("sun.gc.");
    ASSERT_EQ(gc.size(), 2u);
    EXPECT_EQ(gc[0].name, "sun.gc.collector.0.invocations");
    EXPECT_EQ(gc[1].name, "sun.gc.generation.0.space.0.used");
    EXPECT_TRUE(snap->with_prefix("zzz").empty());
}

TEST(hsperfdata, reads_little_endian_files) { expect_sample(sample(true).build(), true); }
TEST(hsperfdata, reads_big_endian_files) { expect_sample(sample(false).build(), false); }

TEST(hsperfdata, reads_a_mapped_file) {
    test::scratch_dir dir;
    sample().write(dir.file("12345"));
    auto mapped = mapped_file::open(dir.file("12345"));
    ASSERT_TRUE(mapped) << mapped.error().describe();
    auto data = hsperf_data::parse(mapped->bytes());
    ASSERT_TRUE(data);
    auto snap = data->snapshot();
    ASSERT_TRUE(snap);
    EXPECT_EQ(snap->string_value("sun.rt.javaCommand"), "com.example.Main --port 8080");
}

TEST(hsperfdata, values_are_read_in_place_when_asked_for) {
    auto b = sample();
    auto file = b.build();
    auto data = hsperf_data::parse(span_of(file));
    ASSERT_TRUE(data);
    auto snap = data->snapshot();
    ASSERT_TRUE(snap);
    const hsperf_entry* used = snap->find("sun.gc.generation.0.space.0.used");
    ASSERT_NE(used, nullptr);
    // The JVM updates the value in place; the view sees the new value without parsing again.
    const std::size_t at = static_cast<std::size_t>(used->data.data() - file.data());
    b.put_u32(file, at, 42);
    b.put_u32(file, at + 4, 0);
    EXPECT_EQ(used->long_value(), 42);
}

TEST(hsperfdata, sees_entries_the_jvm_adds_later) {
    hsperf_builder before;
    before.add_long("a.first", 1).add_long("a.second", 2);
    hsperf_builder after = before;
    after.add_string("a.third", "late");
    auto file = before.build();
    auto data = hsperf_data::parse(span_of(file));
    ASSERT_TRUE(data);
    EXPECT_EQ(data->entries()->size(), 2u);
    auto grown = after.build();
    ASSERT_EQ(grown.size(), file.size());
    std::copy(grown.begin(), grown.end(), file.begin());  // same bytes, the JVM wrote more
    auto entries = data->entries();
    ASSERT_TRUE(entries);
    ASSERT_EQ(entries->size(), 3u);
    EXPECT_EQ((*entries)[2].string_value(), "late");
}

TEST(hsperfdata, an_entry_being_written_ends_the_list) {
    hsperf_builder b;
    b.add_long("a.first", 1).add_long("a.second", 2).add_long("a.third", 3);
    auto file = b.build();
    // Counted and allocated, not yet filled in: the length is still zero.
    const std::size_t third = b.entry_offset(2);
    std::fill(file.begin() + static_cast<std::ptrdiff_t>(third), file.begin() + static_cast<std::ptrdiff_t>(b.used()),
              std::byte{0});
    auto data = hsperf_data::parse(span_of(file));
    ASSERT_TRUE(data);
    auto snap = data->snapshot();
    ASSERT_TRUE(snap) << snap.error().describe();
    EXPECT_FALSE(snap->complete());
    EXPECT_EQ(snap->entries().size(), 2u);
    EXPECT_EQ(snap->long_value("a.second"), 2);

    // Counted before its bytes were marked used.
    auto file2 = b.build();
    b.put_u32(file2, 8, static_cast<std::uint32_t>(third));
    auto data2 = hsperf_data::parse(span_of(file2));
    ASSERT_TRUE(data2);
    auto snap2 = data2->snapshot();
    ASSERT_TRUE(snap2) << snap2.error().describe();
    EXPECT_FALSE(snap2->complete());
    EXPECT_EQ(snap2->entries().size(), 2u);
}

TEST(hsperfdata, a_file_still_being_created_is_readable) {
    hsperf_builder b;
    b.accessible(false).add_long("a.first", 1);
    auto file = b.build();
    auto data = hsperf_data::parse(span_of(file));
    ASSERT_TRUE(data);
    EXPECT_FALSE(data->prologue().accessible);
    EXPECT_EQ(data->snapshot()->long_value("a.first"), 1);
    // Just created: a prologue and no entries yet.
    hsperf_builder empty;
    empty.accessible(false);
    auto file2 = empty.build();
    auto data2 = hsperf_data::parse(span_of(file2));
    ASSERT_TRUE(data2);
    EXPECT_TRUE(data2->entries()->empty());
}

// Parses the file and reads every entry's value; returns the error, if any.
std::optional<error_info> read_all(std::span<const std::byte> bytes) {
    auto data = hsperf_data::parse(bytes);
    if (!data) return data.error();
    auto snap = data->snapshot();
    if (!snap) return snap.error();
    for (const auto& e : snap->entries()) {
        EXPECT_GE(e.data.data(), bytes.data());
        EXPECT_LE(e.data.data() + e.data.size(), bytes.data() + bytes.size());
        (void)e.long_value();
        (void)e.string_value();
    }
    return std::nullopt;
}

TEST(hsperfdata, refuses_a_damaged_prologue) {
    auto good = sample().build();
    auto err = [&](std::vector<std::byte> f) { return read_all(span_of(f)); };
    auto e = err(std::vector<std::byte>(good.begin(), good.begin() + 31));
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code, error_code::out_of_bounds);
    auto bad_magic = good;
    bad_magic[0] = std::byte{0xCB};
    e = err(bad_magic);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code, error_code::bad_magic);
    auto bad_order = good;
    bad_order[4] = std::byte{7};
    e = err(bad_order);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code, error_code::bad_header);
    EXPECT_EQ(e->offset, 4u);
    e = err(hsperf_builder().version(1, 0).build());
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code, error_code::unsupported);
    hsperf_builder b;
    auto far = good;
    b.put_u32(far, 24, 1u << 30);  // entry offset past the file
    e = err(far);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->offset, 24u);
    auto overused = good;
    b.put_u32(overused, 8, static_cast<std::uint32_t>(good.size() + 1));
    e = err(overused);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code, error_code::out_of_bounds);
}

TEST(hsperfdata, refuses_damaged_entries_naming_their_offset) {
    auto b = sample();
    const std::size_t second = b.entry_offset(1);
    struct damage {
        std::size_t field;  // offset within the entry header
        std::uint32_t value;
        error_code code;
    };
    const damage cases[] = {
        {0, 8, error_code::out_of_bounds},          // length below the header
        {0, 1u << 20, error_code::out_of_bounds},   // length past the used bytes
        {4, 4, error_code::out_of_bounds},          // name inside the header
        {4, 1u << 16, error_code::out_of_bounds},   // name past the entry
        {8, 0x80000000u, error_code::bad_value},    // negative vector length
        {8, 1u << 16, error_code::out_of_bounds},   // vector longer than the entry
        {16, 2, error_code::out_of_bounds},         // data inside the header
        {16, 1u << 16, error_code::out_of_bounds},  // data past the entry
    };
    for (const auto& d : cases) {
        auto file = b.build();
        b.put_u32(file, second + d.field, d.value);
        auto e = read_all(span_of(file));
        ASSERT_TRUE(e) << "field " << d.field << " = " << d.value;
        EXPECT_EQ(e->code, d.code) << e->message;
        EXPECT_EQ(e->offset, second) << e->message;
    }
    auto unknown_type = b.build();
    unknown_type[second + 12] = std::byte{'Q'};
    auto e = read_all(span_of(unknown_type));
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code, error_code::bad_value);
    // A name without its NUL: the name runs into the data, fill the rest of the entry.
    auto unterminated = b.build();
    const std::size_t len = static_cast<std::size_t>(b.entry_offset(2) - second);
    for (std::size_t i = second + 20; i < second + len; ++i) unterminated[i] = std::byte{'x'};
    e = read_all(span_of(unterminated));
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code, error_code::bad_value);
    // More entries announced than the used bytes hold.
    auto overcount = b.build();
    b.put_u32(overcount, 28, 0xffffffffu);
    auto data = hsperf_data::parse(span_of(overcount));
    ASSERT_TRUE(data);
    auto snap = data->snapshot();
    ASSERT_TRUE(snap);
    EXPECT_FALSE(snap->complete());
    EXPECT_EQ(snap->entries().size(), 5u);
}

TEST(hsperfdata, survives_every_truncation) {
    auto file = sample().build();
    file.resize(sample().used());
    for (std::size_t n = 0; n <= file.size(); ++n) {
        // A copy of exactly n bytes, so reading past it would leave the vector's storage.
        std::vector<std::byte> cut(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(n));
        auto e = read_all(span_of(cut));
        if (n < file.size())
            EXPECT_TRUE(e) << "cut at " << n;  // the used mark lies beyond the cut
        else
            EXPECT_FALSE(e);
    }
}

TEST(hsperfdata, survives_garbage) {
    std::mt19937 rng(4);
    const auto good = sample().build();
    const std::size_t used = sample().used();
    int parsed = 0;
    for (int round = 0; round < 20000; ++round) {
        std::vector<std::byte> f(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(used));
        const int flips = 1 + static_cast<int>(rng() % 8);
        for (int i = 0; i < flips; ++i) f[rng() % f.size()] = static_cast<std::byte>(rng());
        if (!read_all(span_of(f))) ++parsed;
    }
    for (int round = 0; round < 2000; ++round) {
        std::vector<std::byte> f(rng() % 512);
        for (auto& b : f) b = static_cast<std::byte>(rng());
        if (f.size() >= 8) {
            std::copy(good.begin(), good.begin() + 8, f.begin());  // past the magic
        }
        (void)read_all(span_of(f));
    }
    EXPECT_GT(parsed, 0);  // some flips land in values and names, which stay readable
}

}  // namespace
}  // namespace heapd
