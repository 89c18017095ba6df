// Tests of duplicate-string grouping on its own: Strings and value arrays fed by hand, in either
// order of discovery, and the display form of contents.
#include "analysis/duplicate_strings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/hprof_builder.h"

namespace heapd {
namespace {

using test::byte_vector;

constexpr std::uint8_t t_char = 5, t_byte = 8, t_int = 10;
const vm_layout& compressed() { return candidate_layouts(8)[0]; }

byte_vector latin1(std::string_view s) {
    byte_vector out;
    test::put_text(out, s);
    return out;
}
byte_vector utf16le(std::u16string_view s) {
    byte_vector out;
    for (char16_t c : s) {
        out.push_back(static_cast<std::byte>(c & 0xFF));
        out.push_back(static_cast<std::byte>(c >> 8));
    }
    return out;
}
primitive_array_view array(std::uint64_t id, std::uint8_t type, const byte_vector& data) {
    std::uint32_t length = static_cast<std::uint32_t>(type == t_byte ? data.size() : data.size() / value_size(type, 8));
    return {id, 0, 0, length, type, data};
}

TEST(duplicate_strings, groups_by_contents_and_counts_each_value_array_once) {
    const byte_vector abc = latin1("abc"), other = latin1("xyz");
    duplicate_strings d;
    // Three Strings on array 1, one on array 2 (same contents), one on array 3 (different).
    for (std::uint64_t value : {1, 1, 2, 1, 3}) d.add_string(value, 0, 24);
    d.add_string(0, 0, 24);  // null value: ignored
    d.add_array(array(2, t_byte, abc));
    d.add_array(array(1, t_byte, abc));
    d.add_array(array(3, t_byte, other));
    d.add_array(array(4, t_byte, abc));  // no String holds it
    waste_report r;
    d.finish(compressed(), 0, r);
    ASSERT_EQ(r.duplicate_strings_top.size(), 1u);
    const duplicate_string_entry& g = r.duplicate_strings_top[0];
    EXPECT_EQ(g.content, "abc");
    EXPECT_EQ(g.length, 3u);
    EXPECT_EQ(g.copies, 4u);
    EXPECT_EQ(g.saving_bytes, 3 * 24 + 1 * 24u);  // byte[3] = 16 + 3 -> 24
    EXPECT_EQ(r.duplicate_string_groups, 1u);
    EXPECT_EQ(r.duplicate_strings, 4u);
    EXPECT_EQ(r.duplicate_string_saving, g.saving_bytes);
}

TEST(duplicate_strings, coder_and_array_type_are_part_of_the_contents) {
    const byte_vector ab = latin1("AB");
    duplicate_strings d;
    d.add_string(1, 0, 24);  // Latin-1 "AB"
    d.add_string(2, 1, 24);  // UTF-16 U+4241
    d.add_string(3, 0, 24);  // char[] U+4142 (JDK 8)
    d.add_string(4, 0, 24);  // int[]: not a string value at all
    d.add_string(5, 0, 24);
    d.add_array(array(1, t_byte, ab));
    d.add_array(array(2, t_byte, ab));
    d.add_array(array(3, t_char, ab));
    d.add_array(array(4, t_int, latin1("ABCD")));
    d.add_array(array(5, t_int, latin1("ABCD")));
    waste_report r;
    d.finish(compressed(), 0, r);
    EXPECT_TRUE(r.duplicate_strings_top.empty());
    EXPECT_EQ(r.duplicate_string_groups, 0u);
}

TEST(duplicate_strings, char_arrays_and_utf16_bytes_decode_and_count_in_chars) {
    const byte_vector chars = test::values(8).u2('o').u2(0x00E9).u2('!');
    const byte_vector wide = utf16le(u"o\u00E9!");
    duplicate_strings d;
    for (std::uint64_t v : {1, 2}) d.add_string(v, 0, 24);
    for (std::uint64_t v : {3, 4}) d.add_string(v, 1, 24);
    d.add_array(array(1, t_char, chars));
    d.add_array(array(2, t_char, chars));
    d.add_array(array(3, t_byte, wide));
    d.add_array(array(4, t_byte, wide));
    waste_report r;
    d.finish(compressed(), 0, r);
    ASSERT_EQ(r.duplicate_strings_top.size(), 2u);  // equal text, but stored differently
    for (const auto& g : r.duplicate_strings_top) {
        EXPECT_EQ(g.content, "o\xC3\xA9!");
        EXPECT_EQ(g.length, 3u);
        EXPECT_EQ(g.copies, 2u);
        EXPECT_EQ(g.saving_bytes, 24u + 24);  // 16 + 6 -> 24
    }
}

TEST(duplicate_strings, strings_whose_array_never_came_are_left_out) {
    duplicate_strings d;
    d.add_string(1, 0, 24);
    d.add_string(1, 0, 24);
    waste_report r;
    d.finish(compressed(), 0, r);
    EXPECT_EQ(r.duplicate_string_groups, 0u);
    // Android's arrays without data are not compared either.
    d.add_array(primitive_array_view{1, 0, 0, 3, t_byte, {}});
    d.finish(compressed(), 0, r);
    EXPECT_EQ(r.duplicate_string_groups, 0u);
}

TEST(duplicate_strings, strings_holding_a_range_of_a_shared_array_count_by_their_characters) {
    // JDK 6: "hello world" in one char[]; "world" as a substring of it, twice, and in an array of its own.
    const byte_vector text =
        test::values(8).u2('h').u2('e').u2('l').u2('l').u2('o').u2(' ').u2('w').u2('o').u2('r').u2('l').u2('d');
    const byte_vector world = test::values(8).u2('w').u2('o').u2('r').u2('l').u2('d');
    duplicate_strings d;
    d.add_string(1, 0, 24, 0, 11);  // "hello world"
    d.add_string(1, 0, 24, 6, 5);   // "world", sharing array 1
    d.add_string(1, 0, 24, 6, 5);
    d.add_string(2, 0, 24, 0, 5);           // "world", array 2 whole
    d.add_string(1, 0, 24, 6, 6);           // past the array's end: left out
    d.add_string(1, 0, 24, 0xFFFFFFFF, 2);  // a negative offset: left out
    d.add_array(array(1, t_char, text));
    d.add_array(array(2, t_char, world));
    waste_report r;
    d.finish(compressed(), 0, r);
    ASSERT_EQ(r.duplicate_strings_top.size(), 1u);
    const duplicate_string_entry& g = r.duplicate_strings_top[0];
    EXPECT_EQ(g.content, "world");
    EXPECT_EQ(g.length, 5u);
    EXPECT_EQ(g.copies, 3u);
    // Two Strings; no array: array 1 holds "hello" too, and array 2 is the one kept.
    EXPECT_EQ(g.saving_bytes, 2 * 24u);
    EXPECT_EQ(r.duplicate_strings, 3u);
}

TEST(duplicate_strings, arrays_held_whole_by_ranged_strings_are_saved_like_any_other) {
    const byte_vector ab = test::values(8).u2('a').u2('b');
    duplicate_strings d;
    for (std::uint64_t v : {1, 2, 3}) d.add_string(v, 0, 24, 0, 2);
    for (std::uint64_t v : {1, 2, 3}) d.add_array(array(v, t_char, ab));
    waste_report r;
    d.finish(compressed(), 0, r);
    ASSERT_EQ(r.duplicate_strings_top.size(), 1u);
    EXPECT_EQ(r.duplicate_strings_top[0].content, "ab");
    EXPECT_EQ(r.duplicate_strings_top[0].saving_bytes, 2 * 24u + 2 * 24u);  // char[2] = 16 + 4 -> 24
}

TEST(duplicate_strings, many_groups_are_ordered_by_saving_then_copies_then_contents) {
    std::vector<byte_vector> texts;
    for (int k = 0; k < 10; ++k) texts.push_back(latin1("s" + std::to_string(k)));
    duplicate_strings d;
    // Contents "s0".."s9" with k + 2 copies each, every copy on its own array.
    std::uint64_t id = 1;
    std::vector<std::pair<std::uint64_t, std::size_t>> arrays;
    for (int k = 0; k < 10; ++k)
        for (int c = 0; c < k + 2; ++c) {
            d.add_string(id, 0, 24);
            arrays.emplace_back(id++, k);
        }
    for (auto [a, k] : arrays) d.add_array(array(a, t_byte, texts[k]));
    waste_report r, top3;
    d.finish(compressed(), 0, r);
    d.finish(compressed(), 3, top3);
    ASSERT_EQ(r.duplicate_strings_top.size(), 10u);
    for (int k = 0; k < 10; ++k) {
        SCOPED_TRACE(k);
        const duplicate_string_entry& g = r.duplicate_strings_top[9 - k];
        EXPECT_EQ(g.content, "s" + std::to_string(k));
        EXPECT_EQ(g.copies, k + 2u);
        EXPECT_EQ(g.saving_bytes, (k + 1u) * (24 + 24));
    }
    ASSERT_EQ(top3.duplicate_strings_top.size(), 3u);
    EXPECT_EQ(top3.duplicate_strings_top[0].content, "s9");
    EXPECT_EQ(top3.duplicate_string_saving, r.duplicate_string_saving);
}

TEST(display_java_string, cuts_after_max_chars_and_escapes) {
    byte_vector bytes = latin1(
        "ab\x7F"
        "cd");
    primitive_array_view v{1, 0, 0, 5, t_byte, bytes};
    EXPECT_EQ(display_java_string(v, 0, 60), "ab\\u007fcd");
    EXPECT_EQ(display_java_string(v, 0, 2), "ab...");
    EXPECT_EQ(display_java_string(v, 0, 5), "ab\\u007fcd");
    byte_vector odd = latin1("a\tb\"c\\\n\r\x01z");
    primitive_array_view o{1, 0, 0, static_cast<std::uint32_t>(odd.size()), t_byte, odd};
    EXPECT_EQ(display_java_string(o, 0, 60), "a\\tb\\\"c\\\\\\n\\r\\u0001z");
    byte_vector wide = utf16le(u"\u00E9t\u00E9");
    primitive_array_view u{1, 0, 0, 6, t_byte, wide};
    EXPECT_EQ(display_java_string(u, 1, 60), "\xC3\xA9t\xC3\xA9");
    EXPECT_EQ(display_java_string(u, 1, 1), "\xC3\xA9...");
    EXPECT_EQ(display_java_string(primitive_array_view{1, 0, 0, 0, t_byte, {}}, 0, 60), "");
}

}  // namespace
}  // namespace heapd
