// id_map: lookups by 64-bit id, including the id that marks empty slots inside the table.
#include <gtest/gtest.h>

#include <map>

#include "formats/hprof/id_map.h"

namespace heapd {
namespace {

TEST(id_map, inserts_finds_and_grows) {
    id_map<std::uint32_t> m;
    EXPECT_EQ(m.find(1), nullptr);
    for (std::uint32_t i = 0; i < 10000; ++i) EXPECT_TRUE(m.insert(std::uint64_t{i} * 8 + 0x7f0000000, i).second);
    EXPECT_EQ(m.size(), 10000u);
    for (std::uint32_t i = 0; i < 10000; ++i) {
        const std::uint32_t* v = m.find(std::uint64_t{i} * 8 + 0x7f0000000);
        ASSERT_NE(v, nullptr);
        EXPECT_EQ(*v, i);
    }
    EXPECT_EQ(m.find(0x7f0000004), nullptr);
    auto [v, inserted] = m.insert(0x7f0000000, 99);
    EXPECT_FALSE(inserted);
    EXPECT_EQ(*v, 0u);
}

TEST(id_map, the_empty_slot_marker_is_an_ordinary_key) {
    id_map<int> m;
    const std::uint64_t all_ones = ~std::uint64_t{0};
    EXPECT_EQ(m.find(all_ones), nullptr);
    EXPECT_TRUE(m.insert(all_ones, 7).second);
    EXPECT_FALSE(m.insert(all_ones, 8).second);
    m.insert(0, 1);
    ASSERT_NE(m.find(all_ones), nullptr);
    EXPECT_EQ(*m.find(all_ones), 7);
    EXPECT_EQ(*m.find(0), 1);
    EXPECT_EQ(m.size(), 2u);
    std::map<std::uint64_t, int> seen;
    m.for_each([&](std::uint64_t k, int v) { seen[k] = v; });
    EXPECT_EQ(seen, (std::map<std::uint64_t, int>{{0, 1}, {all_ones, 7}}));
}

}  // namespace
}  // namespace heapd
