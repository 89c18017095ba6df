// Telling a stripped dump from one as the JVM wrote it, array by array.
#include "analysis/stripped_check.h"

#include <gtest/gtest.h>

#include <vector>

namespace heapd {
namespace {

constexpr std::uint8_t t_char = 5, t_byte = 8, t_int = 10;

// Arrays of one type, all zeros but the one at non_zero_at (none when past the end).
void feed(stripped_check& c, std::uint8_t type, std::uint64_t arrays, std::uint64_t non_zero_at = ~0ull) {
    for (std::uint64_t i = 0; i < arrays; ++i) {
        std::vector<std::byte> data(8);
        if (i == non_zero_at) data[5] = std::byte{1};
        c.add(primitive_array_view{i + 1, 0, 0, 2, type, data});
    }
}

TEST(stripped_check, arrays_of_zeros_only_of_both_kinds_are_a_stripped_dump) {
    stripped_check c;
    feed(c, t_int, 16);
    feed(c, t_byte, 10);
    feed(c, t_char, 6);
    EXPECT_TRUE(c.result().arrays);
    EXPECT_TRUE(c.result().strings);
}

TEST(stripped_check, one_array_with_a_byte_that_is_not_zero_is_enough_to_say_no) {
    stripped_check ints, text;
    feed(ints, t_int, 1000, 999);
    feed(ints, t_byte, 100);
    EXPECT_FALSE(ints.result().arrays);
    EXPECT_FALSE(ints.result().strings);  // strings stripped only when the rest is too
    feed(text, t_int, 100);
    feed(text, t_char, 100, 0);
    EXPECT_TRUE(text.result().arrays);  // heapd strip --keep-strings
    EXPECT_FALSE(text.result().strings);
}

TEST(stripped_check, a_few_arrays_of_zeros_are_not_enough) {
    stripped_check c;
    feed(c, t_int, stripped_check::min_arrays - 1);
    feed(c, t_byte, 100);
    EXPECT_FALSE(c.result().arrays);
    // Arrays without data (Android's) and empty ones are not counted.
    c.add(primitive_array_view{99, 0, 0, 5, t_int, {}});
    EXPECT_FALSE(c.result().arrays);
    feed(c, t_int, 1);
    EXPECT_TRUE(c.result().arrays);
}

TEST(stripped_check, all_zero_needs_a_byte) {
    const std::vector<std::byte> zeros(3), one{std::byte{0}, std::byte{0}, std::byte{7}};
    EXPECT_TRUE(all_zero(zeros));
    EXPECT_FALSE(all_zero(one));
    EXPECT_FALSE(all_zero({}));
}

}  // namespace
}  // namespace heapd
