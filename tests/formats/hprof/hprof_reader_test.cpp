// Tests of the HPROF header parser and the top-level record cursor.
#include "formats/hprof/hprof_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "formats/hprof/big_endian.h"
#include "support/hprof_builder.h"

namespace heapd {
namespace {

using test::byte_vector;
using test::hprof_builder;

byte_vector text_bytes(std::string_view s) {
    byte_vector out;
    test::put_text(out, s);
    return out;
}

// Header fields for every supported version and identifier size.
class header_test : public ::testing::TestWithParam<std::tuple<std::string, unsigned>> {};

TEST_P(header_test, parses_format_id_size_and_timestamp) {
    const auto& [format, id_size] = GetParam();
    hprof_builder b(id_size, format, 0x0123456789ABCDEFull);
    auto r = hprof_reader::parse(b.span());
    ASSERT_TRUE(r.has_value()) << r.error().describe();
    EXPECT_EQ(r->header().format, format);
    EXPECT_EQ(r->header().id_size, id_size);
    EXPECT_EQ(r->id_size(), id_size);
    EXPECT_EQ(r->header().timestamp_ms, 0x0123456789ABCDEFull);
    EXPECT_EQ(r->header().header_bytes, format.size() + 1 + 4 + 8);
    EXPECT_EQ(r->data().size(), b.size());
    auto c = r->records();
    EXPECT_EQ(c.position(), format.size() + 13);
    auto next = c.next();
    ASSERT_TRUE(next.has_value());
    EXPECT_FALSE(next->has_value());
}

INSTANTIATE_TEST_SUITE_P(versions, header_test,
                         ::testing::Combine(::testing::Values("JAVA PROFILE 1.0.1", "JAVA PROFILE 1.0.2",
                                                              "JAVA PROFILE 1.0.3"),
                                            ::testing::Values(4u, 8u)));

TEST(hprof_reader, wrong_magic_is_bad_magic_at_offset_zero) {
    hprof_builder b(8, "JAVA PROFILX 1.0.2");
    auto r = hprof_reader::parse(b.span());
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, error_code::bad_magic);
    EXPECT_EQ(r.error().offset, 0u);
}

TEST(hprof_reader, empty_input_is_bad_magic) {
    auto r = hprof_reader::parse({});
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, error_code::bad_magic);
    EXPECT_EQ(r.error().offset, 0u);
}

TEST(hprof_reader, unterminated_format_string_is_bad_magic) {
    auto data = text_bytes("JAVA PROFILE " + std::string(80, '1'));
    auto r = hprof_reader::parse(data);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, error_code::bad_magic);
    EXPECT_EQ(r.error().offset, 0u);
}

TEST(hprof_reader, unknown_version_is_bad_header) {
    hprof_builder b(8, "JAVA PROFILE 1.0.4");
    auto r = hprof_reader::parse(b.span());
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, error_code::bad_header);
    EXPECT_EQ(r.error().offset, 0u);
}

TEST(hprof_reader, identifier_size_five_is_bad_header_at_its_field) {
    hprof_builder b(5, "JAVA PROFILE 1.0.2");
    auto r = hprof_reader::parse(b.span());
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, error_code::bad_header);
    EXPECT_EQ(r.error().offset, 19u);  // "JAVA PROFILE 1.0.2" and its NUL
    EXPECT_NE(r.error().message.find('5'), std::string::npos) << r.error().message;
}

TEST(hprof_reader, header_cut_after_format_is_an_error) {
    hprof_builder b(8, "JAVA PROFILE 1.0.2", 42);
    for (std::size_t keep : {19u, 20u, 23u, 30u}) {
        byte_vector cut(b.bytes().begin(), b.bytes().begin() + static_cast<std::ptrdiff_t>(keep));
        auto r = hprof_reader::parse(cut);
        ASSERT_FALSE(r.has_value()) << keep;
        EXPECT_EQ(r.error().code, error_code::out_of_bounds) << keep;
        EXPECT_EQ(r.error().offset, 19u) << keep;
    }
    // The format string itself cut before its NUL.
    byte_vector cut(b.bytes().begin(), b.bytes().begin() + 10);
    auto r = hprof_reader::parse(cut);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, error_code::bad_magic);
}

TEST(hprof_reader, iterates_records_with_tags_times_offsets_and_bodies) {
    hprof_builder b(4, "JAVA PROFILE 1.0.2");
    b.set_time_delta(7).utf8(0x11, "hello");
    b.set_time_delta(0).raw_record(0x42, test::values(4).u4(0xCAFEBABE).bytes());
    b.heap_dump_end();
    auto r = hprof_reader::parse(b.span());
    ASSERT_TRUE(r.has_value());
    auto c = r->records();

    auto first = c.next();
    ASSERT_TRUE(first.has_value() && first->has_value());
    const hprof_record& a = **first;
    EXPECT_EQ(a.tag, 0x01);
    EXPECT_EQ(a.time_delta, 7u);
    EXPECT_EQ(a.offset, 31u);
    EXPECT_EQ(a.body_offset, 40u);
    ASSERT_EQ(a.body.size(), 4u + 5u);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(a.body.data()) + 4, 5), "hello");
    EXPECT_EQ(a.body.data(), r->data().data() + 40);
    EXPECT_FALSE(a.truncated);
    EXPECT_EQ(c.position(), 49u);

    auto second = c.next();
    ASSERT_TRUE(second.has_value() && second->has_value());
    EXPECT_EQ((*second)->tag, 0x42);
    EXPECT_EQ((*second)->time_delta, 0u);
    EXPECT_EQ((*second)->offset, 49u);
    ASSERT_EQ((*second)->body.size(), 4u);
    EXPECT_EQ(be::u4((*second)->body.data()), 0xCAFEBABEu);

    auto third = c.next();
    ASSERT_TRUE(third.has_value() && third->has_value());
    EXPECT_EQ((*third)->tag, 0x2C);
    EXPECT_EQ((*third)->offset, 62u);
    EXPECT_TRUE((*third)->body.empty());
    EXPECT_FALSE((*third)->truncated);

    for (int i = 0; i < 2; ++i) {  // a clean end stays at the end
        auto end = c.next();
        ASSERT_TRUE(end.has_value());
        EXPECT_FALSE(end->has_value());
    }
    EXPECT_EQ(c.position(), b.size());
}

TEST(hprof_reader, last_record_running_past_the_end_is_flagged_truncated) {
    hprof_builder b(8);
    b.utf8(1, "a");
    const std::uint64_t cut_at = b.size();
    b.raw_record(0x1C, 100, test::values(8).u8(1).u8(2).bytes());  // declares 100, holds 16
    auto r = hprof_reader::parse(b.span());
    ASSERT_TRUE(r.has_value());
    auto c = r->records();
    auto first = c.next();
    ASSERT_TRUE(first.has_value() && first->has_value());
    EXPECT_FALSE((*first)->truncated);
    auto last = c.next();
    ASSERT_TRUE(last.has_value() && last->has_value());
    EXPECT_TRUE((*last)->truncated);
    EXPECT_EQ((*last)->tag, 0x1C);
    EXPECT_EQ((*last)->offset, cut_at);
    EXPECT_EQ((*last)->body.size(), 16u);
    auto end = c.next();
    ASSERT_TRUE(end.has_value());
    EXPECT_FALSE(end->has_value());
}

TEST(hprof_reader, cut_record_header_is_an_error_at_its_offset) {
    hprof_builder b(8);
    b.utf8(1, "a");
    const std::uint64_t at = b.size();
    b.end_thread(3);
    b.truncate(at + 5);  // tag, time and one length byte
    auto r = hprof_reader::parse(b.span());
    ASSERT_TRUE(r.has_value());
    auto c = r->records();
    ASSERT_TRUE(c.next().has_value());
    auto bad = c.next();
    ASSERT_FALSE(bad.has_value());
    EXPECT_EQ(bad.error().code, error_code::out_of_bounds);
    EXPECT_EQ(bad.error().offset, at);
}

TEST(hprof_reader, record_tag_names) {
    EXPECT_STREQ(record_tag_name(0x01), "UTF8");
    EXPECT_STREQ(record_tag_name(0x05), "TRACE");
    EXPECT_STREQ(record_tag_name(0x0E), "CONTROL_SETTINGS");
    EXPECT_STREQ(record_tag_name(0x1C), "HEAP_DUMP_SEGMENT");
    EXPECT_STREQ(record_tag_name(0x2C), "HEAP_DUMP_END");
    EXPECT_EQ(record_tag_name(0x00), nullptr);
    EXPECT_EQ(record_tag_name(0x42), nullptr);
}

}  // namespace
}  // namespace heapd
