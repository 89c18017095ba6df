// The error type of library code: every code has a name that reads back.
#include "base/error.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace heapd {
namespace {

constexpr int code_count = static_cast<int>(error_code::agent_refused) + 1;

TEST(error, every_code_has_its_own_name_that_reads_back) {
    std::set<std::string> names;
    for (int c = 0; c < code_count; ++c) {
        const auto code = static_cast<error_code>(c);
        const std::string name = error_code_name(code);
        EXPECT_NE(name, "unknown") << c;
        EXPECT_TRUE(names.insert(name).second) << name;
        EXPECT_EQ(error_code_from_name(name), code) << name;
    }
    EXPECT_FALSE(error_code_from_name("unknown").has_value());
    EXPECT_FALSE(error_code_from_name("").has_value());
    EXPECT_FALSE(error_code_from_name("bad_input").has_value());  // a wire kind, not a code
}

TEST(error, an_offset_is_shown_when_there_is_one) {
    EXPECT_EQ((error_info{error_code::bad_value, "a bad tag"}.describe()), "a bad tag");
    EXPECT_EQ((error_info{error_code::bad_value, "a bad tag", 42}.describe()), "a bad tag (at file offset 42)");
}

}  // namespace
}  // namespace heapd
