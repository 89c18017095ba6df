// `heapd check-config [FILE]` through the binary: a summary and exit 0 for a valid file, each error
// as FILE:LINE:COLUMN: message and exit 2 for an invalid or unreadable one.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/jvm_process.h"

namespace heapd::test {
namespace {

const std::string shipped = std::string(HEAPD_SOURCE_DIR) + "/systemd/heapd.toml";

TEST(check_config_command, the_shipped_default_file_is_valid) {
    auto r = run_command({heapd_binary(), "check-config", shipped});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out.starts_with(shipped + ": valid\n")) << r.out;
    EXPECT_NE(r.out.find("  socket     /run/heapd/heapd.sock\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  rules      none\n"), std::string::npos) << r.out;
    EXPECT_EQ(r.err, "");
}

TEST(check_config_command, a_valid_file_is_summed_up_rule_by_rule) {
    scratch_dir dir;
    const std::string file = dir.file("heapd.toml");
    std::ofstream(file) << "[daemon]\nworkers = 2\n[retention]\nkeep_bytes = \"20G\"\n"
                           "[metrics]\ntextfile = \"/var/lib/node/heapd.prom\"\n"
                           "[[rule]]\nname = \"spiral\"\nmain_class = \"com.example.*\"\n"
                           "gc_time_percent = 50\ngc_window = \"2m\"\nmax_dumps = 1\n";
    auto r = run_command({heapd_binary(), "check-config", file});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(
        r.out,
        file +
            ": valid\n"
            "  socket     /run/heapd/heapd.sock\n"
            "  store      /var/lib/heapd, at most 50 dumps, at most 20G, for 30 days, each user at most 20 dumps, "
            "leaving 1G or 5% of its disk free\n"
            "  spool      /var/spool/heapd\n"
            "  group      heapd\n"
            "  workers    2, at most 256 clients (32 per user), idle 1m, 10s to stop\n"
            "  metrics    /var/lib/node/heapd.prom every 30s\n"
            "  oom        arming every JVM, looked for every 2s, checked every 1m; the daemon collects the dumps "
            "of those without the hook\n"
            "  rules      1, JVMs read every 5s\n"
            "  rule \"spiral\" (line 7)\n"
            "    JVMs     main class com.example.*\n"
            "    when     GC time above 50% over 2m\n"
            "    limits   cooldown 1h, at most 1 dump per JVM, live objects only\n");
}

TEST(check_config_command, errors_are_listed_one_a_line_and_exit_2) {
    scratch_dir dir;
    const std::string file = dir.file("heapd.toml");
    std::ofstream(file) << "[retention]\nkeep_cout = 5\nkeep_days = -1\n[[rule]]\nname = \"x\"\n";
    auto r = run_command({heapd_binary(), "check-config", file});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err,
              file + ":2:1: unknown key \"keep_cout\" in [retention] (did you mean \"keep_count\"?)\n" + file +
                  ":3:13: retention.keep_days must be from 0 to 1000000, not -1\n" + file +
                  ":4:1: rule \"x\": no trigger: give every, old_gen_percent, gc_time_percent, predict_full_within, "
                  "memory_percent or memory_full_within\n");
    std::ofstream(file) << "[daemon\n";
    auto syntax = run_command({heapd_binary(), "check-config", file});
    EXPECT_EQ(syntax.exit_code, 2);
    EXPECT_TRUE(syntax.err.starts_with(file + ":1:")) << syntax.err;
}

TEST(check_config_command, a_missing_file_is_an_error) {
    scratch_dir dir;
    auto r = run_command({heapd_binary(), "check-config", dir.file("none.toml")});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, dir.file("none.toml") + ": cannot read: No such file or directory\n");
}

}  // namespace
}  // namespace heapd::test
