#include "daemon/server/fair_listing.h"

#include <gtest/gtest.h>

#include <string>

namespace heapd::daemon {
namespace {

std::vector<owned_item> items_of(uid_t owner, int n, std::size_t bytes, int first = 0) {
    std::vector<owned_item> out;
    for (int i = 0; i < n; ++i) out.push_back({owner, wire::json{{"n", first + i}, {"text", std::string(bytes, 'x')}}});
    return out;
}

TEST(fair_listing, everything_when_it_fits) {
    auto items = items_of(1002, 3, 10);
    const fair_listing l = list_fairly(items, 1000);
    EXPECT_EQ(l.items.size(), 3u);
    EXPECT_TRUE(l.left_out.empty());
    EXPECT_EQ(l.left_out_count, 0u);
}

TEST(fair_listing, one_owners_many_items_leave_room_for_each_other_owners) {
    // 2 of root's, 1 of a victim's, then 500 of an attacker's, each ~1 KiB, in 20 KiB.
    auto items = items_of(0, 2, 1000, 0);
    for (auto& i : items_of(1001, 1, 1000, 2)) items.push_back(i);
    for (auto& i : items_of(1002, 500, 1000, 3)) items.push_back(i);
    const fair_listing l = list_fairly(items, 20'000);
    ASSERT_GE(l.items.size(), 15u);
    EXPECT_LE(l.items.dump().size(), 20'000u);
    EXPECT_EQ(l.items[0]["n"], 0);  // in the order given
    EXPECT_EQ(l.items[1]["n"], 1);
    EXPECT_EQ(l.items[2]["n"], 2);
    EXPECT_EQ(l.items[3]["n"], 3);
    ASSERT_EQ(l.left_out.size(), 1u);
    EXPECT_EQ(l.left_out[0]["uid"], 1002);
    EXPECT_EQ(l.left_out_count, 503u - l.items.size());
    EXPECT_EQ(l.left_out[0]["count"], l.left_out_count);
}

}  // namespace
}  // namespace heapd::daemon
