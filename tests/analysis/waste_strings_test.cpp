// Tests of the waste pass's duplicate strings on synthetic dumps: own, shared and mixed value
// arrays, Latin-1, UTF-16 and char[], 32-bit dumps, long and odd contents.
#include "analysis/waste_test_dump.h"

namespace heapd::waste_test {
namespace {

TEST(find_waste, groups_strings_of_equal_contents_and_counts_shared_arrays_once) {
    const analyzed a(strings_dump());
    ASSERT_EQ(a.c.layout, "64-bit, compressed oops");
    ASSERT_TRUE(a.w.computed);
    const waste_report& w = a.w;
    ASSERT_EQ(w.duplicate_strings_top.size(), 4u);
    const std::uint64_t hello = 2 * (string_size + byte_array_size(5));
    const std::uint64_t shared = 3 * string_size;                        // one value array for all four
    const std::uint64_t mix = 2 * string_size + 1 * byte_array_size(3);  // two arrays for three Strings
    const std::uint64_t euro = 1 * (string_size + byte_array_size(8));
    EXPECT_EQ(hello, 96u);
    EXPECT_EQ(shared, 72u);
    EXPECT_EQ(mix, 72u);
    // By saving, then copies, then contents.
    EXPECT_EQ(w.duplicate_strings_top[0].content, "hello");
    EXPECT_EQ(w.duplicate_strings_top[0].copies, 3u);
    EXPECT_EQ(w.duplicate_strings_top[0].length, 5u);
    EXPECT_EQ(w.duplicate_strings_top[0].saving_bytes, hello);
    EXPECT_EQ(w.duplicate_strings_top[1].content, "shared-value");
    EXPECT_EQ(w.duplicate_strings_top[1].copies, 4u);
    EXPECT_EQ(w.duplicate_strings_top[1].saving_bytes, shared);
    EXPECT_EQ(w.duplicate_strings_top[2].content, "mix");
    EXPECT_EQ(w.duplicate_strings_top[2].copies, 3u);
    EXPECT_EQ(w.duplicate_strings_top[2].saving_bytes, mix);
    EXPECT_EQ(w.duplicate_strings_top[3].content,
              "\xE2\x82\xAC"
              "uro");
    EXPECT_EQ(w.duplicate_strings_top[3].length, 4u);
    EXPECT_EQ(w.duplicate_strings_top[3].copies, 2u);
    EXPECT_EQ(w.duplicate_strings_top[3].saving_bytes, euro);
    EXPECT_EQ(w.duplicate_string_groups, 4u);
    EXPECT_EQ(w.duplicate_strings, 12u);
    EXPECT_EQ(w.duplicate_string_saving, hello + shared + mix + euro);
    EXPECT_EQ(group(w, "AB"), nullptr);
    EXPECT_EQ(group(w, "alone"), nullptr);
    // No collections, boxes, and String value arrays are not zero arrays.
    EXPECT_TRUE(w.collections.empty());
    EXPECT_TRUE(w.boxed.empty());
    EXPECT_TRUE(w.zero_arrays.empty());
    EXPECT_EQ(w.saving_bytes, w.duplicate_string_saving);
}

TEST(find_waste, top_keeps_the_biggest_groups_and_totals_cover_all) {
    const analyzed all(strings_dump()), two(strings_dump(), 2);
    ASSERT_EQ(two.w.duplicate_strings_top.size(), 2u);
    EXPECT_EQ(two.w.duplicate_strings_top[0].content, "hello");
    EXPECT_EQ(two.w.duplicate_strings_top[1].content, "shared-value");
    EXPECT_EQ(two.w.duplicate_string_groups, all.w.duplicate_string_groups);
    EXPECT_EQ(two.w.duplicate_string_saving, all.w.duplicate_string_saving);
}

TEST(find_waste, strings_of_a_32_bit_dump_use_its_layout) {
    const analyzed a(strings_dump(4));
    ASSERT_EQ(a.c.layout, "32-bit");
    // 32-bit: String = 8 header + 4 + 1 + 4 -> 24; byte[5] = 12 + 5 -> 24.
    const duplicate_string_entry* hello = group(a.w, "hello");
    ASSERT_NE(hello, nullptr);
    EXPECT_EQ(hello->copies, 3u);
    EXPECT_EQ(hello->saving_bytes, 2u * (24 + 24));
    const duplicate_string_entry* shared = group(a.w, "shared-value");
    ASSERT_NE(shared, nullptr);
    EXPECT_EQ(shared->saving_bytes, 3u * 24);
}

TEST(find_waste, jdk8_strings_hold_char_arrays) {
    hprof_builder b(8);
    declare_classes(b, false);
    byte_vector chars = values(8).u2('o').u2(0x00E9).u2('!');
    for (std::uint64_t i = 0; i < 3; ++i) {
        b.instance(0x10000 + i * 0x10, string_class, values(8).id(0x20000 + i * 0x10).u4(0).bytes());
        b.primitive_array(0x20000 + i * 0x10, t_char, 3, chars);
    }
    b.end_segment();
    const analyzed a(b);
    ASSERT_EQ(a.w.duplicate_strings_top.size(), 1u);
    EXPECT_EQ(a.w.duplicate_strings_top[0].content, "o\xC3\xA9!");
    EXPECT_EQ(a.w.duplicate_strings_top[0].length, 3u);
    EXPECT_EQ(a.w.duplicate_strings_top[0].saving_bytes, 2u * (string_size + 24));  // char[3] = 16 + 6 -> 24
}

TEST(find_waste, long_and_odd_contents_are_shortened_and_escaped) {
    hprof_builder b(8);
    declare_classes(b);
    const std::string long_text(70, 'x');
    const std::string odd = "a\tb\"c\\\n\x01z";
    for (std::uint64_t i = 0; i < 2; ++i) {
        string_object(b, 0x10000 + i * 0x10, 0x20000 + i * 0x10);
        byte_array(b, 0x20000 + i * 0x10, latin1(long_text));
        string_object(b, 0x11000 + i * 0x10, 0x21000 + i * 0x10);
        byte_array(b, 0x21000 + i * 0x10, latin1(odd));
    }
    b.end_segment();
    const analyzed a(b);
    ASSERT_EQ(a.w.duplicate_strings_top.size(), 2u);
    const duplicate_string_entry* l = group(a.w, std::string(50, 'x') + "...");
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(l->length, 70u);
    EXPECT_EQ(l->saving_bytes, string_size + byte_array_size(70));
    const duplicate_string_entry* o = group(a.w, "a\\tb\\\"c\\\\\\n\\u0001z");
    ASSERT_NE(o, nullptr);
    EXPECT_EQ(o->length, 9u);
}

}  // namespace
}  // namespace heapd::waste_test
