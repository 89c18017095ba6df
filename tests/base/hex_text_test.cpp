// Hex text of ids and addresses: lowercase, 0x, zero-padded to a width and never cut.
#include "base/hex_text.h"

#include <gtest/gtest.h>

namespace heapd {
namespace {

TEST(hex_text, ids_in_lowercase_hex_with_0x) {
    EXPECT_EQ(hex_id(0), "0x0");
    EXPECT_EQ(hex_id(0x7f3aBC00), "0x7f3abc00");
    EXPECT_EQ(hex_id(~std::uint64_t{0}), "0xffffffffffffffff");
}

TEST(hex_text, zero_padded_to_a_width) {
    EXPECT_EQ(hex_id(0x12a, 6), "0x00012a");
    EXPECT_EQ(hex_id(0x7f0012345678, 12), "0x7f0012345678");
    EXPECT_EQ(hex_id(0x1234, 2), "0x1234");  // never cut
    EXPECT_EQ(hex_id(1, 1000).size(), 34u);  // at most 32 digits
}

}  // namespace
}  // namespace heapd
