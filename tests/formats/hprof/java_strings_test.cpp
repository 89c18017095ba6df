// Tests of String decoding (Latin-1, UTF-16 in byte[], char[]) and of reading instance fields.
#include "formats/hprof/java_strings.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "formats/hprof/basic_type.h"
#include "formats/hprof/heap_walk.h"
#include "formats/hprof/hprof_reader.h"
#include "formats/hprof/record_index.h"
#include "support/hprof_builder.h"

namespace heapd {
namespace {

using test::byte_vector;
using test::hprof_builder;
using test::values;

constexpr std::uint8_t t_object = 2, t_boolean = 4, t_char = 5, t_float = 6, t_double = 7, t_byte = 8, t_short = 9,
                       t_int = 10, t_long = 11;

primitive_array_view array_of(std::uint8_t type, const byte_vector& data) {
    const unsigned elem = value_size(type, 8);
    return primitive_array_view{0x10, 0, 0, static_cast<std::uint32_t>(data.size() / elem), type, data};
}

// UTF-16 code units as a byte[] in little-endian order (coder 1 on x86).
byte_vector utf16_le(std::initializer_list<std::uint16_t> units) {
    byte_vector out;
    for (std::uint16_t u : units) {
        test::put_u1(out, static_cast<std::uint8_t>(u));
        test::put_u1(out, static_cast<std::uint8_t>(u >> 8));
    }
    return out;
}

// UTF-16 code units as a char[] in the dump's big-endian order.
byte_vector utf16_be(std::initializer_list<std::uint16_t> units) {
    byte_vector out;
    for (std::uint16_t u : units) test::put_u2(out, u);
    return out;
}

// 'A', é, €, 😀 (a surrogate pair), an unpaired high surrogate before 'B', and a lone low surrogate.
constexpr std::initializer_list<std::uint16_t> mixed = {0x41, 0xE9, 0x20AC, 0xD83D, 0xDE00, 0xD800, 0x42, 0xDC00};
const std::string mixed_utf8 =
    "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xEF\xBF\xBD"
    "B\xEF\xBF\xBD";

TEST(decode_java_string, latin1_bytes_including_the_upper_half) {
    const byte_vector data = values().u1('C').u1('a').u1('f').u1(0xE9).u1(' ').u1(0xFF).u1(0x80).u1(0x7F).bytes();
    EXPECT_EQ(decode_java_string(array_of(t_byte, data), 0), "Caf\xC3\xA9 \xC3\xBF\xC2\x80\x7F");
}

TEST(decode_java_string, latin1_stops_at_max_chars) {
    const byte_vector data = values().u1('C').u1('a').u1('f').u1(0xE9).bytes();
    EXPECT_EQ(decode_java_string(array_of(t_byte, data), 0, 3), "Caf");
    EXPECT_EQ(decode_java_string(array_of(t_byte, data), 0, 4), "Caf\xC3\xA9");
    EXPECT_EQ(decode_java_string(array_of(t_byte, data), 0, 0), "");
}

TEST(decode_java_string, utf16_byte_arrays_are_little_endian_with_surrogates_paired) {
    EXPECT_EQ(decode_java_string(array_of(t_byte, utf16_le(mixed)), 1), mixed_utf8);
}

TEST(decode_java_string, a_high_surrogate_at_the_end_is_replaced) {
    EXPECT_EQ(decode_java_string(array_of(t_byte, utf16_le({0x61, 0xDBFF})), 1), "a\xEF\xBF\xBD");
    EXPECT_EQ(decode_java_string(array_of(t_byte, utf16_le({0xDBFF, 0xDBFF, 0xDFFF})), 1),
              "\xEF\xBF\xBD\xF4\x8F\xBF\xBF");  // the second high surrogate pairs: U+10FFFF
}

TEST(decode_java_string, utf16_ignores_an_odd_last_byte_and_stops_at_max_chars) {
    byte_vector data = utf16_le({0x68, 0x69, 0x21});
    data.push_back(std::byte{0x41});
    EXPECT_EQ(decode_java_string(array_of(t_byte, data), 1), "hi!");
    EXPECT_EQ(decode_java_string(array_of(t_byte, data), 1, 2), "hi");
}

TEST(decode_java_string, char_arrays_are_big_endian) {
    EXPECT_EQ(decode_java_string(array_of(t_char, utf16_be(mixed)), 0), mixed_utf8);
    // The coder does not apply to char[].
    EXPECT_EQ(decode_java_string(array_of(t_char, utf16_be(mixed)), 1), mixed_utf8);
    EXPECT_EQ(decode_java_string(array_of(t_char, utf16_be({0x4E16, 0x754C, 0x21})), 0, 2), "\xE4\xB8\x96\xE7\x95\x8C");
}

TEST(decode_java_string, other_array_types_and_empty_arrays_decode_to_nothing) {
    EXPECT_EQ(decode_java_string(array_of(t_int, values().u4(0x41424344).bytes()), 0), "");
    EXPECT_EQ(decode_java_string(array_of(t_short, values().u2(0x41).bytes()), 0), "");
    EXPECT_EQ(decode_java_string(array_of(t_byte, {}), 0), "");
    EXPECT_EQ(decode_java_string(array_of(t_byte, {}), 1), "");
    EXPECT_EQ(decode_java_string(array_of(t_char, {}), 0), "");
}

// Classes and instances of a field-reading fixture, gathered by one walk.
struct gathered : heap_visitor {
    class_table* classes;
    std::map<std::uint64_t, instance_view> instances;
    void class_dump(const class_dump_view& c) { classes->add(c); }
    void instance(const instance_view& v) { instances[v.id] = v; }
};

// A reader, index and class table over a builder's bytes (the builder must outlive it).
struct loaded {
    explicit loaded(const hprof_builder& b)
        : reader(*hprof_reader::parse(b.span())), idx(record_index::build(reader)), classes(idx) {
        EXPECT_TRUE(idx.problems().empty());
        gathered g;
        g.classes = &classes;
        problem_list problems;
        walk_heap(idx, g, &problems);
        EXPECT_TRUE(problems.empty());
        instances = std::move(g.instances);
    }
    const instance_view& at(std::uint64_t id) const { return instances.at(id); }
    hprof_reader reader;
    record_index idx;
    class_table classes;
    std::map<std::uint64_t, instance_view> instances;
};

class read_field_test : public ::testing::TestWithParam<unsigned> {};

// Base {a: int, ref: Object, x: long}, Mid extends Base {s: short, flag: boolean},
// Leaf extends Mid {x: byte, c: char, f: float, d: double}; Leaf's x hides Base's.
hprof_builder field_fixture(unsigned id) {
    hprof_builder b(id);
    b.utf8(1, "demo/Base").utf8(2, "demo/Mid").utf8(3, "demo/Leaf");
    b.utf8(11, "a")
        .utf8(12, "ref")
        .utf8(13, "x")
        .utf8(14, "s")
        .utf8(15, "flag")
        .utf8(16, "c")
        .utf8(17, "f")
        .utf8(18, "d");
    b.load_class(1, 0x100, 0, 1).load_class(2, 0x101, 0, 2).load_class(3, 0x102, 0, 3);
    b.begin_segment();
    b.class_dump(0x100, 0, {{11, t_int}, {12, t_object}, {13, t_long}});
    b.class_dump(0x101, 0x100, {{14, t_short}, {15, t_boolean}});
    b.class_dump(0x102, 0x101, {{13, t_byte}, {16, t_char}, {17, t_float}, {18, t_double}});
    // Leaf's fields, then Mid's, then Base's.
    b.instance(0x1000, 0x102,
               values(id)
                   .u1(0xFE)
                   .u2(0x20AC)
                   .u4(0x3FC00000)
                   .u8(0x400921FB54442D18)  // Leaf
                   .u2(0x8001)
                   .u1(1)  // Mid
                   .u4(0xDEADBEEF)
                   .id(0x7777)
                   .u8(0x0123456789ABCDEF)  // Base
                   .bytes());
    b.instance(0x2000, 0x100, values(id).u4(5).id(0).u8(9).bytes());
    b.instance(0x3000, 0x102, values(id).u1(1).u2(2).bytes());  // data cut short
    b.instance(0x4000, 0x999, values(id).u4(5).bytes());        // class without CLASS_DUMP
    b.end_segment();
    return b;
}

TEST_P(read_field_test, reads_fields_of_the_class_and_its_supers_widened_to_64_bits) {
    const hprof_builder b = field_fixture(GetParam());
    loaded l(b);
    const instance_view& leaf = l.at(0x1000);
    EXPECT_EQ(read_field(l.classes, leaf, "x"), 0xFEu);  // Leaf's byte x hides Base's long x
    EXPECT_EQ(read_field(l.classes, leaf, "c"), 0x20ACu);
    EXPECT_EQ(read_field(l.classes, leaf, "f"), 0x3FC00000u);
    EXPECT_EQ(read_field(l.classes, leaf, "d"), 0x400921FB54442D18u);
    EXPECT_EQ(read_field(l.classes, leaf, "s"), 0x8001u);
    EXPECT_EQ(read_field(l.classes, leaf, "flag"), 1u);
    EXPECT_EQ(read_field(l.classes, leaf, "a"), 0xDEADBEEFu);
    EXPECT_EQ(read_field(l.classes, leaf, "ref"), 0x7777u);
    EXPECT_EQ(read_field(l.classes, leaf, "nope"), std::nullopt);

    const instance_view& base = l.at(0x2000);
    EXPECT_EQ(read_field(l.classes, base, "a"), 5u);
    EXPECT_EQ(read_field(l.classes, base, "ref"), 0u);
    EXPECT_EQ(read_field(l.classes, base, "x"), 9u);
    EXPECT_EQ(read_field(l.classes, base, "s"), std::nullopt);  // a subclass's field
}

TEST_P(read_field_test, fields_beyond_the_data_or_of_unknown_classes_are_absent) {
    const hprof_builder b = field_fixture(GetParam());
    loaded l(b);
    const instance_view& cut = l.at(0x3000);
    EXPECT_EQ(read_field(l.classes, cut, "x"), 1u);
    EXPECT_EQ(read_field(l.classes, cut, "c"), 2u);
    EXPECT_EQ(read_field(l.classes, cut, "f"), std::nullopt);
    EXPECT_EQ(read_field(l.classes, cut, "a"), std::nullopt);
    EXPECT_EQ(read_field(l.classes, l.at(0x4000), "a"), std::nullopt);
}

INSTANTIATE_TEST_SUITE_P(id_sizes, read_field_test, ::testing::Values(4u, 8u));

TEST(read_string_fields, reads_value_and_coder_of_compact_strings) {
    hprof_builder b(8);
    b.utf8(1, "java/lang/String").utf8(10, "value").utf8(11, "coder").utf8(12, "hash").utf8(13, "hashIsZero");
    b.load_class(1, 0x100, 0, 1);
    b.begin_segment();
    b.class_dump(0x100, 0, {{10, t_object}, {11, t_byte}, {12, t_int}, {13, t_boolean}});
    b.instance(0x1000, 0x100, values(8).id(0xABC0).u1(1).u4(0).u1(0).bytes());
    b.instance(0x1010, 0x100, values(8).id(0xABD0).u1(0).u4(0).u1(0).bytes());
    b.end_segment();
    loaded l(b);
    auto f = read_string_fields(l.classes, l.at(0x1000));
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->value_id, 0xABC0u);
    EXPECT_EQ(f->coder, 1u);
    f = read_string_fields(l.classes, l.at(0x1010));
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->value_id, 0xABD0u);
    EXPECT_EQ(f->coder, 0u);
}

TEST(read_string_fields, old_strings_without_a_coder_read_as_coder_zero) {
    hprof_builder b(4);
    b.utf8(1, "java/lang/String").utf8(10, "value").utf8(12, "hash").utf8(14, "offset").utf8(15, "count");
    b.utf8(2, "demo/NotAString").utf8(16, "other");
    b.load_class(1, 0x100, 0, 1).load_class(2, 0x101, 0, 2);
    b.begin_segment();
    b.class_dump(0x100, 0, {{10, t_object}, {14, t_int}, {15, t_int}, {12, t_int}});
    b.class_dump(0x101, 0, {{16, t_object}});
    b.instance(0x1000, 0x100, values(4).id(0x2000).u4(0).u4(3).u4(0).bytes());
    b.instance(0x1010, 0x101, values(4).id(0x2000).bytes());
    b.end_segment();
    loaded l(b);
    auto f = read_string_fields(l.classes, l.at(0x1000));
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->value_id, 0x2000u);
    EXPECT_EQ(f->coder, 0u);
    EXPECT_EQ(f->offset, 0u);
    EXPECT_EQ(f->count, 3u);
    EXPECT_EQ(read_string_fields(l.classes, l.at(0x1010)), std::nullopt);
}

TEST(string_chars, a_range_of_offset_and_count_or_the_whole_array) {
    const byte_vector hello = utf16_be({'h', 'e', 'l', 'l', 'o'});
    const primitive_array_view text = array_of(t_char, hello);
    string_fields whole;
    EXPECT_EQ(decode_java_string(*string_chars(text, whole), 0), "hello");
    string_fields range;
    range.offset = 1;
    range.count = 3;
    auto part = string_chars(text, range);
    ASSERT_TRUE(part.has_value());
    EXPECT_EQ(part->length, 3u);
    EXPECT_EQ(decode_java_string(*part, 0), "ell");
    range.count = 0;
    EXPECT_EQ(decode_java_string(*string_chars(text, range), 0), "");
    // Ranges that do not lie within the array, a negative offset among them.
    range.count = 5;
    EXPECT_EQ(string_chars(text, range), std::nullopt);
    range.offset = 0xFFFFFFFF;
    range.count = 2;
    EXPECT_EQ(string_chars(text, range), std::nullopt);
}

}  // namespace
}  // namespace heapd
