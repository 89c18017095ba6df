// The keyed hash against SipHash-2-4's published test vectors (the reference implementation's,
// key 00 01 .. 0f, messages 00 01 .. of growing length).
#include "base/keyed_hash.h"

#include <gtest/gtest.h>

#include <string>

namespace heapd {
namespace {

hash_key counting_key() {
    hash_key k{};
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(i);
    return k;
}

std::string counting(std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s.push_back(static_cast<char>(i));
    return s;
}

TEST(keyed_hash, matches_siphash_test_vectors) {
    EXPECT_EQ(keyed_hash(counting_key(), counting(0)), 0x726fdb47dd0e0e31ULL);
    EXPECT_EQ(keyed_hash(counting_key(), counting(1)), 0x74f839c593dc67fdULL);
    EXPECT_EQ(keyed_hash(counting_key(), counting(8)), 0x93f5f5799a932462ULL);
    EXPECT_EQ(keyed_hash(counting_key(), counting(15)), 0xa129ca6149be45e5ULL);
}

TEST(keyed_hash, another_key_gives_another_tag) {
    hash_key other = counting_key();
    other[0] ^= 1;
    EXPECT_NE(keyed_hash(other, "heapd"), keyed_hash(counting_key(), "heapd"));
    EXPECT_NE(keyed_hash(counting_key(), "heapd"), keyed_hash(counting_key(), "heape"));
}

}  // namespace
}  // namespace heapd
