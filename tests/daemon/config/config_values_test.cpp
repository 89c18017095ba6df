// The config file's durations and sizes: what reads, what does not, and how they are written back.
#include <gtest/gtest.h>

#include "daemon/config/config_values.h"

namespace heapd::daemon {
namespace {

using std::chrono::milliseconds;

TEST(config_values, durations_read_in_every_unit_and_combined) {
    EXPECT_EQ(parse_duration("30s"), milliseconds(30'000));
    EXPECT_EQ(parse_duration("10m"), milliseconds(600'000));
    EXPECT_EQ(parse_duration("6h"), milliseconds(6 * 3'600'000));
    EXPECT_EQ(parse_duration("1d"), milliseconds(86'400'000));
    EXPECT_EQ(parse_duration("2w"), milliseconds(14 * 86'400'000LL));
    EXPECT_EQ(parse_duration("500ms"), milliseconds(500));
    EXPECT_EQ(parse_duration("1h30m"), milliseconds(5'400'000));
    EXPECT_EQ(parse_duration("1d2h3m4s5ms"), milliseconds(93'784'005));
    EXPECT_EQ(parse_duration("0"), milliseconds(0));
    EXPECT_EQ(parse_duration("0s"), milliseconds(0));
    EXPECT_EQ(parse_duration("90s"), milliseconds(90'000));
}

TEST(config_values, malformed_durations_are_refused) {
    for (const char* bad : {"", "s", "10", "1x", "30m1h", "1h1h", "-1s", "1.5h", " 1s", "1s ", "1 s", "1H", "1sec",
                            "99999999999999999999999s", "40000d", "h1"})
        EXPECT_EQ(parse_duration(bad), std::nullopt) << bad;
}

TEST(config_values, sizes_read_in_powers_of_1024) {
    EXPECT_EQ(parse_size("0"), 0u);
    EXPECT_EQ(parse_size("4096"), 4096u);
    EXPECT_EQ(parse_size("7B"), 7u);
    EXPECT_EQ(parse_size("100K"), 102'400u);
    EXPECT_EQ(parse_size("512M"), 512ull << 20);
    EXPECT_EQ(parse_size("20G"), 20ull << 30);
    EXPECT_EQ(parse_size("20g"), 20ull << 30);
    EXPECT_EQ(parse_size("20GB"), 20ull << 30);
    EXPECT_EQ(parse_size("1TiB"), 1ull << 40);
    EXPECT_EQ(parse_size("2P"), 2ull << 50);
    for (const char* bad : {"", "G", "1Q", "-1", "1.5G", "1 G", "16385P", "99999999999999999999", "1GiBs"})
        EXPECT_EQ(parse_size(bad), std::nullopt) << bad;
}

TEST(config_values, written_back_they_read_the_same) {
    EXPECT_EQ(duration_string(milliseconds(5'400'000)), "1h30m");
    EXPECT_EQ(duration_string(milliseconds(500)), "500ms");
    EXPECT_EQ(duration_string(milliseconds(0)), "0s");
    EXPECT_EQ(duration_string(milliseconds(14 * 86'400'000LL)), "14d");
    EXPECT_EQ(size_string(20ull << 30), "20G");
    EXPECT_EQ(size_string(512ull << 20), "512M");
    EXPECT_EQ(size_string(1000), "1000");
    EXPECT_EQ(size_string(0), "0");
    for (long long ms : {1LL, 999LL, 1000LL, 61'001LL, 93'784'005LL, 3'600'000LL * 24 * 365})
        EXPECT_EQ(parse_duration(duration_string(milliseconds(ms))), milliseconds(ms)) << ms;
    for (unsigned long long b : {1ull, 1023ull, 1024ull, 1536ull, 3ull << 40})
        EXPECT_EQ(parse_size(size_string(b)), b) << b;
}

}  // namespace
}  // namespace heapd::daemon
