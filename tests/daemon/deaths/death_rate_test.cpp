#include "daemon/deaths/death_rate.h"

#include <gtest/gtest.h>

namespace heapd::daemon {
namespace {

TEST(death_rate, a_burst_then_one_each_refill_per_owner_and_others_untouched) {
    death_rate rate(3, 1000);
    const std::int64_t t0 = 1'800'000'000'000;
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(rate.admit(1002, t0));
    for (int i = 0; i < 5; ++i) EXPECT_FALSE(rate.admit(1002, t0 + 10));
    EXPECT_TRUE(rate.admit(1001, t0 + 10));  // another user's deaths are not held back
    EXPECT_TRUE(rate.admit(0, t0 + 10));
    EXPECT_TRUE(rate.admit(1002, t0 + 1010));  // a second later: one more
    EXPECT_FALSE(rate.admit(1002, t0 + 1020));
    const auto held = rate.take_held_back(t0 + 1020);
    ASSERT_EQ(held.size(), 1u);
    EXPECT_EQ(held[0].owner, 1002u);
    EXPECT_EQ(held[0].count, 6u);
    EXPECT_TRUE(rate.take_held_back(t0 + 2000).empty());  // once each 10 s at most
    EXPECT_FALSE(rate.admit(1002, t0 + 1030));
    EXPECT_TRUE(rate.take_held_back(t0 + 5000).empty());
    const auto later = rate.take_held_back(t0 + 11'020);
    ASSERT_EQ(later.size(), 1u);
    EXPECT_EQ(later[0].count, 1u);
    // A clock stepped back neither refills nor empties the bucket.
    EXPECT_TRUE(rate.admit(1002, t0 + 11'030));
    EXPECT_TRUE(rate.admit(1002, t0));
}

}  // namespace
}  // namespace heapd::daemon
