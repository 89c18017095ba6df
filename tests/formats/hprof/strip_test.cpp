// Tests of `heapd strip`: primitive array contents zeroed, everything else byte for byte the same,
// strings kept on request, damaged dumps refused, truncated dumps copied up to the cut.
#include "formats/hprof/strip.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/census.h"
#include "formats/hprof/heap_walk.h"
#include "formats/hprof/hprof_reader.h"
#include "formats/hprof/record_index.h"
#include "support/hprof_builder.h"

namespace heapd {
namespace {

using test::byte_vector;
using test::hprof_builder;
using test::values;

constexpr std::uint8_t t_object = 2, t_char = 5, t_byte = 8, t_int = 10, t_long = 11;

// Which array contents the fixture writes: the data, or zeros where strip should have put them.
enum class contents { original, all_zeroed, strings_kept };

// File offsets of a few sub-records of the fixture.
struct fixture_offsets {
    std::uint64_t secret_bytes = 0;    // the byte[] that no String refers to
    std::uint64_t password_chars = 0;  // the char[] in the last segment
    std::uint64_t end_record = 0;      // HEAP_DUMP_END
};

byte_vector text_bytes(std::string_view s) {
    byte_vector out;
    test::put_text(out, s);
    return out;
}

byte_vector zeros_like(const byte_vector& v) { return byte_vector(v.size()); }

// Two Strings (Latin-1 and UTF-16) with their value arrays, a Box, arrays of several types, two
// segments and the records around them.
hprof_builder fixture(unsigned id, contents c, fixture_offsets* where = nullptr) {
    const bool zero_strings = c == contents::all_zeroed;
    const bool zero_others = c != contents::original;
    hprof_builder b(id, "JAVA PROFILE 1.0.2", 1700000000000);
    b.utf8(1, "java/lang/Object").utf8(2, "java/lang/String").utf8(3, "demo/Box").utf8(4, "[Ljava/lang/Object;");
    b.utf8(10, "value").utf8(11, "coder").utf8(12, "hash").utf8(13, "data").utf8(14, "n");
    b.load_class(1, 0x100, 0, 1).load_class(2, 0x101, 0, 2).load_class(3, 0x102, 0, 3).load_class(4, 0x103, 0, 4);
    b.begin_segment();
    b.class_dump(0x100, 0, {});
    b.class_dump(0x101, 0x100, {{10, t_object}, {11, t_byte}, {12, t_int}});
    b.class_dump(0x102, 0x100, {{13, t_object}, {14, t_int}});
    b.class_dump(0x103, 0x100, {});
    b.root_sticky_class(0x100).root_sticky_class(0x101).root_thread_object(0x5000, 1, 0);
    b.instance(0x1000, 0x101, values(id).id(0x2000).u1(0).u4(0x11223344).bytes());
    b.instance(0x1010, 0x101, values(id).id(0x2010).u1(1).u4(0x55667788).bytes());
    const byte_vector hello = text_bytes("hello");
    const byte_vector utf16 = values(id).u1('h').u1(0).u1(0xE9).u1(0).bytes();  // "hé", little-endian
    b.primitive_array(0x2000, t_byte, 5, zero_strings ? zeros_like(hello) : hello);
    b.primitive_array(0x2010, t_byte, 4, zero_strings ? zeros_like(utf16) : utf16);
    b.end_segment();
    b.begin_segment();
    const byte_vector ints = values(id).u4(1).u4(2).u4(0xFFFFFFFF).u4(0x7F000001).bytes();
    b.primitive_array(0x3000, t_int, 4, zero_others ? zeros_like(ints) : ints);
    const byte_vector secret = text_bytes("secret!!");
    if (where) where->secret_bytes = b.size();
    b.primitive_array(0x3010, t_byte, 8, zero_others ? zeros_like(secret) : secret);
    const byte_vector chars = values(id).u2('p').u2('w').bytes();
    if (where) where->password_chars = b.size();
    b.primitive_array(0x3020, t_char, 2, zero_others ? zeros_like(chars) : chars);
    b.primitive_array(0x3030, t_long, 0);
    b.primitive_array_nodata(0x3040, t_char, 5);
    b.instance(0x4000, 0x102, values(id).id(0x3000).u4(7).bytes());
    b.object_array(0x5000, 0x103, {0x1000, 0x1010, 0x4000, 0});
    b.end_segment();
    if (where) where->end_record = b.size();
    b.heap_dump_end();
    return b;
}

// An anonymous in-memory file for the stripped output.
class memfd {
public:
    memfd() : fd_(::memfd_create("stripped", MFD_CLOEXEC)) { EXPECT_GE(fd_, 0); }
    ~memfd() {
        if (fd_ >= 0) ::close(fd_);
    }
    int fd() const { return fd_; }
    byte_vector contents() const {
        struct stat st {};
        EXPECT_EQ(::fstat(fd_, &st), 0);
        byte_vector out(static_cast<std::size_t>(st.st_size));
        EXPECT_EQ(::pread(fd_, out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
        return out;
    }

private:
    int fd_;
};

// The histogram of a dump, as (name, instances, bytes) rows, and its object counts.
struct census_summary {
    std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> rows;
    std::uint64_t instances = 0, object_arrays = 0, primitive_arrays = 0, shallow_bytes = 0;
    bool operator==(const census_summary&) const = default;
};

census_summary census_of(std::span<const std::byte> bytes) {
    auto reader = hprof_reader::parse(bytes);
    EXPECT_TRUE(reader.has_value());
    if (!reader) return {};
    record_index idx = record_index::build(*reader);
    class_table classes(idx);
    heap_census census(idx, classes, 10);
    walk_heap(idx, census);
    census_result r = census.finish();
    census_summary s;
    for (const auto& e : r.histogram) s.rows.emplace_back(e.class_name, e.instances, e.shallow_bytes);
    s.instances = r.instances;
    s.object_arrays = r.object_arrays;
    s.primitive_arrays = r.primitive_arrays;
    s.shallow_bytes = r.shallow_bytes;
    return s;
}

class strip_test : public ::testing::TestWithParam<unsigned> {};

TEST_P(strip_test, zeroes_every_primitive_array_and_changes_nothing_else) {
    const unsigned id = GetParam();
    const hprof_builder in = fixture(id, contents::original);
    const hprof_builder expected = fixture(id, contents::all_zeroed);
    ASSERT_EQ(in.size(), expected.size());
    ASSERT_NE(in.bytes(), expected.bytes());
    memfd out;
    auto stats = strip_dump(in.span(), out.fd(), {});
    ASSERT_TRUE(stats.has_value()) << stats.error().describe();
    EXPECT_EQ(stats->arrays_zeroed, 5u);
    EXPECT_EQ(stats->bytes_zeroed, 5u + 4 + 16 + 8 + 4);
    EXPECT_EQ(stats->strings_kept, 0u);
    EXPECT_EQ(stats->bytes_written, in.size());
    EXPECT_FALSE(stats->truncated);
    EXPECT_EQ(out.contents(), expected.bytes());
}

TEST_P(strip_test, keep_strings_leaves_string_values_readable) {
    const unsigned id = GetParam();
    const hprof_builder in = fixture(id, contents::original);
    const hprof_builder expected = fixture(id, contents::strings_kept);
    memfd out;
    auto stats = strip_dump(in.span(), out.fd(), {.keep_strings = true});
    ASSERT_TRUE(stats.has_value()) << stats.error().describe();
    EXPECT_EQ(stats->arrays_zeroed, 3u);
    EXPECT_EQ(stats->bytes_zeroed, 16u + 8 + 4);
    EXPECT_EQ(stats->strings_kept, 2u);
    EXPECT_EQ(stats->bytes_written, in.size());
    EXPECT_EQ(out.contents(), expected.bytes());
}

TEST_P(strip_test, the_stripped_dump_gives_the_same_histogram) {
    const unsigned id = GetParam();
    const hprof_builder in = fixture(id, contents::original);
    memfd out;
    auto stats = strip_dump(in.span(), out.fd(), {});
    ASSERT_TRUE(stats.has_value()) << stats.error().describe();
    const byte_vector stripped = out.contents();
    const census_summary before = census_of(in.span());
    const census_summary after = census_of(stripped);
    EXPECT_EQ(before.instances, 3u);
    EXPECT_EQ(before.object_arrays, 1u);
    EXPECT_EQ(before.primitive_arrays, 7u);
    EXPECT_EQ(before.rows.size(), 7u);  // String, Box, Object[], byte[], int[], char[], long[]
    EXPECT_EQ(after, before);
}

TEST_P(strip_test, a_truncated_dump_is_copied_up_to_its_last_whole_sub_record) {
    const unsigned id = GetParam();
    fixture_offsets at;
    hprof_builder in = fixture(id, contents::original, &at);
    const hprof_builder zeroed = fixture(id, contents::all_zeroed);
    in.truncate(at.password_chars + 6);  // inside the char[]'s header
    memfd out;
    auto stats = strip_dump(in.span(), out.fd(), {});
    ASSERT_TRUE(stats.has_value()) << stats.error().describe();
    EXPECT_TRUE(stats->truncated);
    EXPECT_EQ(stats->arrays_zeroed, 4u);
    EXPECT_EQ(stats->bytes_zeroed, 5u + 4 + 16 + 8);
    EXPECT_EQ(stats->bytes_written, at.password_chars);
    const byte_vector got = out.contents();
    EXPECT_EQ(got, byte_vector(zeroed.bytes().begin(),
                               zeroed.bytes().begin() + static_cast<std::ptrdiff_t>(at.password_chars)));

    // The copy reads as a dump cut after the byte[] that held the secret.
    auto reader = hprof_reader::parse(got);
    ASSERT_TRUE(reader.has_value());
    record_index idx = record_index::build(*reader);
    EXPECT_TRUE(idx.truncated());
    ASSERT_EQ(idx.heap_records().size(), 2u);
    problem_list problems;
    class_table classes(idx);
    heap_census census(idx, classes, 0);
    walk_heap(idx, census, &problems);
    EXPECT_TRUE(problems.empty());
    census_result r = census.finish();
    EXPECT_EQ(r.instances, 2u);
    EXPECT_EQ(r.primitive_arrays, 4u);
}

TEST_P(strip_test, a_dump_cut_inside_a_record_header_is_copied_whole) {
    const unsigned id = GetParam();
    fixture_offsets at;
    hprof_builder in = fixture(id, contents::original, &at);
    const hprof_builder zeroed = fixture(id, contents::all_zeroed);
    in.truncate(at.end_record + 4);
    memfd out;
    auto stats = strip_dump(in.span(), out.fd(), {});
    ASSERT_TRUE(stats.has_value()) << stats.error().describe();
    EXPECT_TRUE(stats->truncated);
    EXPECT_EQ(stats->arrays_zeroed, 5u);
    EXPECT_EQ(stats->bytes_written, at.end_record + 4);
    EXPECT_EQ(out.contents(), byte_vector(zeroed.bytes().begin(),
                                          zeroed.bytes().begin() + static_cast<std::ptrdiff_t>(at.end_record + 4)));
}

TEST_P(strip_test, a_damaged_heap_segment_is_refused_and_nothing_is_written) {
    const unsigned id = GetParam();
    hprof_builder b(id);
    b.begin_segment();
    b.primitive_array(0x10, t_byte, 4, text_bytes("abcd"));
    const std::uint64_t bad = b.size();
    b.raw_subrecord(values(id).u1(0x42).u4(0).bytes());
    b.primitive_array(0x20, t_byte, 4, text_bytes("efgh"));
    b.end_segment();
    b.begin_segment().primitive_array(0x30, t_byte, 4, text_bytes("ijkl")).end_segment();
    memfd out;
    auto stats = strip_dump(b.span(), out.fd(), {});
    ASSERT_FALSE(stats.has_value());
    EXPECT_EQ(stats.error().code, error_code::unknown_tag);
    EXPECT_EQ(stats.error().offset, bad);
    EXPECT_TRUE(stats.error().message.starts_with("refusing to strip a damaged dump: ")) << stats.error().message;
    EXPECT_TRUE(out.contents().empty());
}

TEST_P(strip_test, a_damaged_segment_before_a_cut_is_still_refused) {
    const unsigned id = GetParam();
    hprof_builder b(id);
    b.begin_segment();
    b.primitive_array(0x10, 77, 4);  // no such basic type
    b.end_segment();
    b.begin_segment().primitive_array(0x30, t_byte, 4, text_bytes("ijkl")).end_segment();
    b.truncate(b.size() - 2);
    memfd out;
    auto stats = strip_dump(b.span(), out.fd(), {});
    ASSERT_FALSE(stats.has_value());
    EXPECT_EQ(stats.error().code, error_code::bad_value);
    EXPECT_TRUE(out.contents().empty());
}

TEST_P(strip_test, an_unknown_top_level_record_is_refused) {
    const unsigned id = GetParam();
    hprof_builder b(id);
    b.utf8(1, "x");
    const std::uint64_t unknown = b.size();
    b.raw_record(0x55, text_bytes("opaque data"));
    b.begin_segment().primitive_array(0x30, t_byte, 4, text_bytes("ijkl")).end_segment();
    memfd out;
    auto stats = strip_dump(b.span(), out.fd(), {});
    ASSERT_FALSE(stats.has_value());
    EXPECT_EQ(stats.error().code, error_code::unknown_tag);
    EXPECT_EQ(stats.error().offset, unknown);
    EXPECT_TRUE(out.contents().empty());
}

INSTANTIATE_TEST_SUITE_P(id_sizes, strip_test, ::testing::Values(4u, 8u));

TEST(strip, keep_strings_keeps_char_array_values_of_old_strings) {
    hprof_builder b(8);
    b.utf8(2, "java/lang/String").utf8(10, "value").utf8(12, "hash").load_class(2, 0x101, 0, 2);
    b.begin_segment();
    b.class_dump(0x101, 0, {{10, t_object}, {12, t_int}});
    b.instance(0x1000, 0x101, values(8).id(0x2000).u4(0).bytes());
    const byte_vector chars = values(8).u2('o').u2('k').bytes();
    b.primitive_array(0x2000, t_char, 2, chars);
    b.primitive_array(0x2010, t_char, 2, chars);
    b.end_segment();
    memfd out;
    auto stats = strip_dump(b.span(), out.fd(), {.keep_strings = true});
    ASSERT_TRUE(stats.has_value()) << stats.error().describe();
    EXPECT_EQ(stats->strings_kept, 1u);
    EXPECT_EQ(stats->arrays_zeroed, 1u);
    EXPECT_EQ(stats->bytes_zeroed, 4u);
    const byte_vector got = out.contents();
    ASSERT_EQ(got.size(), b.size());
    // The kept array's data sits 4 bytes before the zeroed one's header; the zeroed one ends the segment.
    EXPECT_TRUE(std::equal(got.end() - 4, got.end(), byte_vector(4).begin()));
    const std::size_t kept_at = got.size() - 4 - (1 + 8 + 9) - 4;
    EXPECT_TRUE(std::equal(chars.begin(), chars.end(), got.begin() + static_cast<std::ptrdiff_t>(kept_at)));
}

TEST(strip, refuses_what_is_not_a_dump) {
    const byte_vector junk = text_bytes("PK\x03\x04 not a heap dump at all");
    memfd out;
    auto stats = strip_dump(junk, out.fd(), {});
    ASSERT_FALSE(stats.has_value());
    EXPECT_EQ(stats.error().code, error_code::bad_magic);
    EXPECT_TRUE(out.contents().empty());
}

TEST(strip, a_write_failure_is_an_io_error) {
    const hprof_builder in = fixture(8, contents::original);
    auto stats = strip_dump(in.span(), -1, {});
    ASSERT_FALSE(stats.has_value());
    EXPECT_EQ(stats.error().code, error_code::io);
}

TEST(strip, a_dump_without_heap_records_is_copied_unchanged) {
    hprof_builder b(8);
    b.utf8(1, "java/lang/Object").load_class(1, 0x100, 0, 1).control_settings(1, 4);
    memfd out;
    auto stats = strip_dump(b.span(), out.fd(), {});
    ASSERT_TRUE(stats.has_value()) << stats.error().describe();
    EXPECT_EQ(stats->arrays_zeroed, 0u);
    EXPECT_EQ(stats->bytes_written, b.size());
    EXPECT_EQ(out.contents(), b.bytes());
}

}  // namespace
}  // namespace heapd
