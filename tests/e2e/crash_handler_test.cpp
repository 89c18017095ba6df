// The crash handler: a crash of `heapd serve` (made on purpose by the test-only HEAPD_TEST_CRASH)
// leaves a backtrace of the crashing thread on stderr, and the process still dies of its signal.
#include <gtest/gtest.h>
#include <signal.h>

#include <regex>

#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

command_result crash(const std::string& how) {
    shared_dir dir;
    return run_command({"env", "HEAPD_TEST_CRASH=" + how, heapd_binary(), "serve", "--foreground", "--oom-arm",
                        "hooked", "--socket", dir.file("s.sock"), "--store", dir.file("store")});
}

// The frames of the backtrace in stderr, "#N 0xADDR name+0xOFF".
std::vector<std::string> frames(const std::string& err) {
    std::vector<std::string> out;
    std::regex frame(R"(heapd:   #\d+ 0x[0-9a-f]+ (\S+))");
    for (auto it = std::sregex_iterator(err.begin(), err.end(), frame); it != std::sregex_iterator(); ++it)
        out.push_back((*it)[1]);
    return out;
}

bool has_frame(const std::vector<std::string>& f, const std::string& part) {
    for (const auto& s : f)
        if (s.find(part) != std::string::npos) return true;
    return false;
}

TEST(crash_handler, a_segfault_leaves_the_backtrace_of_the_crashing_thread) {
    auto r = crash("1");
    EXPECT_EQ(r.exit_code, 128 + SIGSEGV) << r.err;
    EXPECT_NE(r.err.find("heapd: fatal signal SIGSEGV at address 0x10 in thread "), std::string::npos) << r.err;
    auto f = frames(r.err);
    EXPECT_GE(f.size(), 4u) << r.err;
    EXPECT_TRUE(has_frame(f, "bad_write")) << r.err;
    EXPECT_TRUE(has_frame(f, "crash_for_test")) << r.err;
    EXPECT_TRUE(has_frame(f, "run_serve")) << r.err;
    EXPECT_TRUE(has_frame(f, "main")) << r.err;
    EXPECT_NE(r.err.find("heapd: end of backtrace"), std::string::npos) << r.err;
}

TEST(crash_handler, an_abort_is_reported_and_still_aborts) {
    auto r = crash("abort");
    EXPECT_EQ(r.exit_code, 128 + SIGABRT) << r.err;
    EXPECT_NE(r.err.find("heapd: fatal signal SIGABRT in thread "), std::string::npos) << r.err;
    auto f = frames(r.err);
    EXPECT_TRUE(has_frame(f, "abort")) << r.err;
    EXPECT_TRUE(has_frame(f, "crash_for_test")) << r.err;
}

TEST(crash_handler, a_crash_on_another_thread_shows_that_thread) {
    auto r = crash("thread");
    EXPECT_EQ(r.exit_code, 128 + SIGSEGV) << r.err;
    auto f = frames(r.err);
    EXPECT_TRUE(has_frame(f, "bad_write")) << r.err;
    EXPECT_TRUE(has_frame(f, "crash_for_test")) << r.err;  // the thread's lambda lives in it
    EXPECT_FALSE(has_frame(f, "run_serve")) << r.err;      // the main thread's frames are not this thread's
}

TEST(crash_handler, without_the_variable_nothing_crashes) {
    shared_dir dir;
    auto r = run_command({heapd_binary(), "serve", "--foreground", "--oom-arm", "hooked", "--socket",
                          dir.file("x/" + std::string(120, 's')), "--store", dir.file("store")});
    EXPECT_EQ(r.exit_code, 3) << r.err;  // a socket path too long: refused, no crash
    EXPECT_EQ(r.err.find("fatal signal"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("longer than 107 bytes"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace heapd::test
