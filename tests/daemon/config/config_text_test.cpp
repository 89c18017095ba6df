// A configuration in words: check-config's summary and what a reload changed.
#include <gtest/gtest.h>

#include <algorithm>

#include "daemon/config/config_file.h"
#include "daemon/config/config_text.h"

namespace heapd::daemon {
namespace {

heapd_config parsed(const std::string& text) {
    auto c = parse_config(text, "heapd.toml");
    EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().front().describe());
    return c.value_or(heapd_config{});
}

bool has(const std::vector<std::string>& lines, const std::string& line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST(config_text, rules_are_described_in_words) {
    heapd_config c = parsed(R"([[rule]]
name = "spiral"
main_class = "com.example.*"
command = "-Xmx16g"
user = "app"
container = true
old_gen_percent = 80
old_gen_collections = 3
gc_time_percent = 12.5
gc_window = "90s"
predict_full_within = "15m"
predict_window = "20m"
cooldown = "1h30m"
max_dumps = 1
[[rule]]
name = "nightly"
every = "1d"
live = false
max_dumps = 0
)");
    ASSERT_EQ(c.rules.size(), 2u);
    EXPECT_EQ(describe_selector(c.rules[0].select),
              "main class com.example.*, command /-Xmx16g/, user app, in a container");
    EXPECT_EQ(describe_triggers(c.rules[0]),
              "old gen above 80% after collections, 3 measurements in a row; GC time above 12.5% over 1m30s; "
              "old gen predicted full within 15m (trend over 20m)");
    EXPECT_EQ(describe_limits(c.rules[0]), "cooldown 1h30m, at most 1 dump per JVM, live objects only");
    EXPECT_EQ(describe_selector(c.rules[1].select), "every JVM");
    EXPECT_EQ(describe_triggers(c.rules[1]), "every 1d");
    EXPECT_EQ(describe_limits(c.rules[1]), "cooldown 1h, no limit of dumps per JVM, all objects");
    auto summary = config_summary(c);
    EXPECT_TRUE(has(summary, "rule \"spiral\" (line 1)"));
    EXPECT_TRUE(has(summary, "  when     every 1d"));
    EXPECT_TRUE(has(summary, "rules      2, JVMs read every 5s"));
    EXPECT_TRUE(
        has(summary,
            "store      /var/lib/heapd, at most 50 dumps, no size limit, for 30 days, each user at most 20 dumps, "
            "leaving 1G or 5% of its disk free"));
}

TEST(config_text, a_reload_tells_what_changes_now_and_what_needs_a_restart) {
    heapd_config before = parsed(
        "[retention]\nkeep_count = 10\n[[rule]]\nname = \"a\"\nevery = \"1h\"\n"
        "[[rule]]\nname = \"b\"\nevery = \"1h\"\n");
    heapd_config after = parsed(
        "[daemon]\nworkers = 2\npoll_interval = \"1s\"\n[retention]\nkeep_count = 1\n"
        "keep_bytes = \"1G\"\n[[rule]]\nname = \"a\"\nevery = \"2h\"\n"
        "[[rule]]\nname = \"c\"\nevery = \"1h\"\n");
    config_changes c = compare_configs(before, after);
    EXPECT_EQ(c.need_restart, (std::vector<std::string>{"daemon.workers 1 -> 2"}));
    EXPECT_EQ(c.live, (std::vector<std::string>{"daemon.poll_interval 5s -> 1s", "retention.keep_count 10 -> 1",
                                                "retention.keep_bytes 0 -> 1G", "rule added: \"c\"",
                                                "rule changed: \"a\"", "rule removed: \"b\""}));
    // The same file read again, its rules on other lines: nothing changed.
    heapd_config again = parsed(
        "\n\n[retention]\nkeep_count = 10\n[[rule]]\nname = \"b\"\nevery = \"1h\"\n"
        "[[rule]]\nname = \"a\"\nevery = \"1h\"\n");
    EXPECT_TRUE(compare_configs(before, again).empty());
}

}  // namespace
}  // namespace heapd::daemon
