// heapd's command line: usage errors exit 1, unreadable or invalid input exits 2 with a clear message.
#include <gtest/gtest.h>

#include <fstream>

#include "support/jvm_process.h"

namespace heapd::test {
namespace {

TEST(main, usage_errors_exit_1) {
    EXPECT_EQ(run_command({heapd_binary()}).exit_code, 1);
    EXPECT_EQ(run_command({heapd_binary(), "analyze"}).exit_code, 1);
    EXPECT_EQ(run_command({heapd_binary(), "no-such-command"}).exit_code, 1);
    EXPECT_EQ(run_command({heapd_binary(), "analyze", "--top", "x", "f"}).exit_code, 1);
    EXPECT_EQ(run_command({heapd_binary(), "--help"}).exit_code, 0);
}

TEST(main, bad_input_exits_2_with_the_reason) {
    scratch_dir dir;
    auto missing = run_command({heapd_binary(), "analyze", dir.file("missing.hprof")});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("No such file"), std::string::npos) << missing.err;
    std::ofstream(dir.file("text.hprof")) << "not a heap dump\n";
    auto text = run_command({heapd_binary(), "analyze", dir.file("text.hprof")});
    EXPECT_EQ(text.exit_code, 2);
    EXPECT_NE(text.err.find("not an HPROF file"), std::string::npos) << text.err;
    EXPECT_NE(text.err.find("offset 0"), std::string::npos) << text.err;
    std::ofstream(dir.file("bad.gz"), std::ios::binary) << "\x1f\x8b\x08garbage-garbage-garbage";
    auto gz = run_command({heapd_binary(), "analyze", dir.file("bad.gz")});
    EXPECT_EQ(gz.exit_code, 2);
    EXPECT_NE(gz.err.find("gzip"), std::string::npos) << gz.err;
}

}  // namespace
}  // namespace heapd::test
