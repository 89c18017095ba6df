// The config file read into a heapd_config: every key, every kind of error with its exact line and
// column, the command line's overrides, and the default file shipped in systemd/heapd.toml.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "daemon/config/config_file.h"
#include "support/jvm_process.h"

namespace heapd::daemon {
namespace {

using namespace std::chrono_literals;

// The errors of text, each as FILE:LINE:COLUMN: message.
std::vector<std::string> errors_of(const std::string& text) {
    auto c = parse_config(text, "heapd.toml");
    std::vector<std::string> out;
    if (!c)
        for (const config_error& e : c.error()) out.push_back(e.describe());
    return out;
}

std::string file_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

const std::string shipped = std::string(HEAPD_SOURCE_DIR) + "/systemd/heapd.toml";

TEST(config_file, an_empty_file_is_the_defaults) {
    heapd_config base;
    base.serve.spool_dir = "/elsewhere";
    auto c = parse_config("# nothing\n", "heapd.toml", base);
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->serve.socket_path, "/run/heapd/heapd.sock");
    EXPECT_EQ(c->serve.spool_dir, "/elsewhere");
    EXPECT_EQ(c->serve.retention.max_count, 50u);
    EXPECT_EQ(c->poll_interval, 5s);
    EXPECT_TRUE(c->rules.empty());
}

TEST(config_file, every_key_is_read) {
    auto c = parse_config(R"(
[daemon]
socket = "/run/h/h.sock"
store = "/srv/heapd"
spool = ""
group = "ops"
workers = 4
poll_interval = "1500ms"
max_connections = 10
shutdown_grace = "1m"

[retention]
keep_count = 7
keep_bytes = "20G"
keep_days = 0

[metrics]
textfile = "/var/lib/node/heapd.prom"
interval = "15s"

[[rule]]
name = "nightly"
main_class = "com.example.*"
command = "-Xmx[0-9]+g"
user = "app"
container = false
every = "1d"
old_gen_percent = 85.5
old_gen_collections = 3
gc_time_percent = 40
gc_window = "2m"
cooldown = "0s"
max_dumps = 0
live = false

[[rule]]
name = "uid"
user = 1001
every = "1h30m"
)",
                          "heapd.toml");
    ASSERT_TRUE(c.has_value()) << c.error().front().describe();
    const serve_options& s = c->serve;
    EXPECT_EQ(s.socket_path, "/run/h/h.sock");
    EXPECT_EQ(s.store_dir, "/srv/heapd");
    EXPECT_EQ(s.spool_dir, "");
    EXPECT_EQ(s.group, "ops");
    EXPECT_EQ(s.workers, 4u);
    EXPECT_EQ(c->poll_interval, 1500ms);
    EXPECT_EQ(s.max_connections, 10u);
    EXPECT_EQ(s.shutdown_grace, 60s);
    EXPECT_EQ(s.retention.max_count, 7u);
    EXPECT_EQ(s.retention.max_bytes, 20ull << 30);
    EXPECT_EQ(s.retention.max_age_days, 0u);
    EXPECT_EQ(c->metrics.textfile, "/var/lib/node/heapd.prom");
    EXPECT_EQ(c->metrics.interval, 15s);
    ASSERT_EQ(c->rules.size(), 2u);
    const dump_rule& r = c->rules[0];
    EXPECT_EQ(r.name, "nightly");
    EXPECT_EQ(r.line, 21);
    EXPECT_EQ(r.select.main_class, "com.example.*");
    EXPECT_EQ(r.select.command, "-Xmx[0-9]+g");
    ASSERT_TRUE(r.select.command_re.has_value());
    EXPECT_TRUE(std::regex_search("java -Xmx16g Main", *r.select.command_re));
    EXPECT_FALSE(std::regex_search("java -Xmx512m Main", *r.select.command_re));
    EXPECT_EQ(r.select.user, "app");
    EXPECT_EQ(r.select.container, false);
    EXPECT_EQ(r.every, std::chrono::seconds(86400));
    EXPECT_EQ(r.old_gen_percent, 85.5);
    EXPECT_EQ(r.old_gen_collections, 3u);
    EXPECT_EQ(r.gc_time_percent, 40.0);
    EXPECT_EQ(r.gc_window, 120s);
    EXPECT_EQ(r.cooldown, 0s);
    EXPECT_EQ(r.max_dumps, 0u);
    EXPECT_FALSE(r.live);
    const dump_rule& u = c->rules[1];
    EXPECT_EQ(u.line, 36);
    EXPECT_EQ(u.select.user, "1001");
    EXPECT_EQ(u.every, 5400s);
    EXPECT_FALSE(u.select.command_re.has_value());
    EXPECT_EQ(u.cooldown, 3600s);  // the defaults of what a rule leaves out
    EXPECT_EQ(u.max_dumps, 3u);
    EXPECT_TRUE(u.live);
    EXPECT_FALSE(u.predict_full_within);
    EXPECT_EQ(u.predict_window, 600s);
}

TEST(config_file, sampling_rules_are_read) {
    auto c = parse_config(
        "[daemon]\nagent_library = \"/opt/heapd/libheapd_agent.so\"\n[[rule]]\nname = \"s\"\n"
        "every = \"1h\"\naction = \"sample\"\nsample_interval = 65536\nsample_depth = 8\n",
        "heapd.toml");
    ASSERT_TRUE(c) << c.error().front().describe();
    EXPECT_EQ(c->serve.agent_library, "/opt/heapd/libheapd_agent.so");
    ASSERT_EQ(c->rules.size(), 1u);
    EXPECT_EQ(c->rules[0].action, rule_action::sample);
    EXPECT_EQ(c->rules[0].sample_interval, 65536);
    EXPECT_EQ(c->rules[0].sample_depth, 8);
    auto d = parse_config("[[rule]]\nname = \"d\"\nevery = \"1h\"\n", "heapd.toml");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->rules[0].action, rule_action::dump);
    EXPECT_EQ(
        errors_of("[[rule]]\nname = \"a\"\nevery = \"1h\"\naction = \"watch\"\n"),
        (std::vector<std::string>{"heapd.toml:4:10: rule \"a\": action is \"dump\" or \"sample\", not \"watch\""}));
    EXPECT_EQ(errors_of("[[rule]]\nname = \"a\"\nevery = \"1h\"\nsample_depth = 4\n"),
              (std::vector<std::string>{
                  "heapd.toml:4:16: rule \"a\": sample_depth does nothing unless action = \"sample\""}));
    EXPECT_EQ(errors_of("[[rule]]\nname = \"a\"\nevery = \"1h\"\naction = \"sample\"\nsample_depth = 65\n").size(), 1u);
}

TEST(config_file, the_predicting_rule_keys_are_read) {
    auto c = parse_config("[[rule]]\nname = \"leak\"\npredict_full_within = \"15m\"\npredict_window = \"20m\"\n",
                          "heapd.toml");
    ASSERT_TRUE(c) << c.error().front().describe();
    ASSERT_EQ(c->rules.size(), 1u);
    EXPECT_EQ(c->rules[0].predict_full_within, 900s);
    EXPECT_EQ(c->rules[0].predict_window, 1200s);
}

TEST(config_file, the_memory_rule_keys_are_read) {
    auto c = parse_config("[[rule]]\nname = \"rss\"\nmemory_percent = 80\nmemory_polls = 3\n", "heapd.toml");
    ASSERT_TRUE(c) << c.error().front().describe();
    ASSERT_EQ(c->rules.size(), 1u);
    EXPECT_EQ(c->rules[0].memory_percent, 80.0);
    EXPECT_EQ(c->rules[0].memory_polls, 3u);
    auto d = parse_config("[[rule]]\nname = \"rss\"\nmemory_percent = 85.5\n", "heapd.toml");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->rules[0].memory_polls, 2u);
    EXPECT_EQ(
        errors_of("[[rule]]\nname = \"a\"\nevery = \"1h\"\nmemory_polls = 2\n"),
        (std::vector<std::string>{"heapd.toml:4:16: rule \"a\": memory_polls does nothing without memory_percent"}));
    EXPECT_EQ(errors_of("[[rule]]\nname = \"a\"\nmemory_percent = 101\n").size(), 1u);
    EXPECT_EQ(errors_of("[[rule]]\nname = \"a\"\nmemory_percent = 80\nmemory_polls = 0\n").size(), 1u);
}

TEST(config_file, the_memory_trend_keys_are_read) {
    auto c =
        parse_config("[[rule]]\nname = \"rss\"\nmemory_full_within = \"5m\"\nmemory_window = \"90s\"\n", "heapd.toml");
    ASSERT_TRUE(c) << c.error().front().describe();
    EXPECT_EQ(c->rules[0].memory_full_within, 300s);
    EXPECT_EQ(c->rules[0].memory_window, 90s);
    EXPECT_FALSE(c->rules[0].memory_percent);
    auto d = parse_config("[[rule]]\nname = \"rss\"\nmemory_full_within = \"1m\"\n", "heapd.toml");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->rules[0].memory_window, 120s);
    EXPECT_EQ(errors_of("[[rule]]\nname = \"a\"\nevery = \"1h\"\nmemory_window = \"1m\"\n"),
              (std::vector<std::string>{
                  "heapd.toml:4:17: rule \"a\": memory_window does nothing without memory_full_within"}));
    EXPECT_EQ(errors_of("[[rule]]\nname = \"a\"\nmemory_full_within = \"0s\"\n").size(), 1u);
}

TEST(config_file, oom_arming_keys_are_read) {
    auto c = parse_config(R"(
[oom]
arm = false
poll_interval = "500ms"
recheck = "5m"
)",
                          "heapd.toml");
    ASSERT_TRUE(c.has_value()) << c.error().front().describe();
    EXPECT_EQ(c->oom.arm, arm_mode::none);
    EXPECT_EQ(c->oom.poll_interval, 500ms);
    EXPECT_EQ(c->oom.recheck, 300s);
    auto bad = parse_config("[oom]\narm = 1\nrecheck = \"10ms\"\nwhat = 2\n", "heapd.toml");
    ASSERT_FALSE(bad.has_value());
    EXPECT_EQ(bad.error().size(), 3u);
    EXPECT_FALSE(parse_config("[oom]\narm = \"some\"\n", "heapd.toml").has_value());
    EXPECT_FALSE(parse_config("[oom]\nselect = \"app\"\n", "heapd.toml").has_value());
    EXPECT_FALSE(parse_config("[[oom.select]]\nmain_klass = \"app\"\n", "heapd.toml").has_value());
    // Every JVM is armed unless the file says otherwise; "hooked" is the old way, true is all.
    heapd_config defaults;
    EXPECT_EQ(defaults.oom.arm, arm_mode::all);
    EXPECT_TRUE(defaults.oom.select.empty());
    EXPECT_EQ(parse_config("[oom]\narm = true\n", "heapd.toml")->oom.arm, arm_mode::all);
    EXPECT_EQ(parse_config("[oom]\narm = \"hooked\"\n", "heapd.toml")->oom.arm, arm_mode::hooked);
    auto selected = parse_config(R"(
[oom]
arm = "all"
[[oom.select]]
main_class = "com.example.*"
[[oom.select]]
user = "app"
container = true
[[oom.select]]
container = "web-*"
pod = "checkout-*"
namespace = "shop"
)",
                                 "heapd.toml");
    ASSERT_TRUE(selected.has_value()) << selected.error().front().describe();
    ASSERT_EQ(selected->oom.select.size(), 3u);
    EXPECT_EQ(selected->oom.select[2].container_name, "web-*");
    EXPECT_FALSE(selected->oom.select[2].container.has_value());
    EXPECT_EQ(selected->oom.select[2].pod, "checkout-*");
    EXPECT_EQ(selected->oom.select[2].pod_namespace, "shop");
    EXPECT_EQ(selected->oom.select[0].main_class, "com.example.*");
    EXPECT_EQ(selected->oom.select[1].user, "app");
    EXPECT_EQ(selected->oom.select[1].container, std::optional<bool>(true));
}

TEST(config_file, upload_keys_are_read_and_checked) {
    auto c = parse_config(R"(
[upload]
endpoint = "https://s3.eu-west-1.amazonaws.com/"
bucket = "fleet-heaps.prod"
prefix = "/heapd/eu/"
region = "eu-west-1"
credentials_file = "/etc/heapd/s3-credentials"
html = false
dump = true
part_size = "64M"
state = "/srv/heapd-upload"
interval = "30s"
metrics_textfile = "/var/lib/prometheus/node-exporter/heapd-upload.prom"
)",
                          "heapd.toml");
    ASSERT_TRUE(c.has_value()) << c.error().front().describe();
    const upload_options& u = c->upload;
    EXPECT_EQ(u.endpoint, "https://s3.eu-west-1.amazonaws.com");  // no trailing '/'
    EXPECT_EQ(u.bucket, "fleet-heaps.prod");
    EXPECT_EQ(u.prefix, "heapd/eu");  // nor leading or trailing '/'
    EXPECT_EQ(u.region, "eu-west-1");
    EXPECT_EQ(u.credentials_file, "/etc/heapd/s3-credentials");
    EXPECT_FALSE(u.html);
    EXPECT_TRUE(u.dump);
    EXPECT_EQ(u.part_size, 64u << 20);
    EXPECT_EQ(u.state_dir, "/srv/heapd-upload");
    EXPECT_EQ(u.interval, 30s);
    EXPECT_EQ(u.metrics_textfile, "/var/lib/prometheus/node-exporter/heapd-upload.prom");
    EXPECT_EQ(errors_of("[upload]\nendpoint = \"ftp://x\"\nbucket = \"Big_Bucket\"\npart_size = \"1M\"\n"),
              (std::vector<std::string>{
                  "heapd.toml:2:12: upload.endpoint must be an http:// or https:// URL, not \"ftp://x\"",
                  "heapd.toml:3:10: upload.bucket must be 3 to 63 lower-case letters, digits, '.' and '-'",
                  "heapd.toml:4:13: upload.part_size must be 5M to 5G"}));
    EXPECT_EQ(errors_of("[upload]\nendpoint = \"http://127.0.0.1:9000\"\n"),
              (std::vector<std::string>{"heapd.toml:1:1: [upload] with an endpoint needs a bucket"}));
    heapd_config defaults;
    EXPECT_TRUE(defaults.upload.endpoint.empty());  // nothing is uploaded unless asked
}

TEST(config_file, a_toml_syntax_error_is_reported_where_it_is) {
    EXPECT_EQ(
        errors_of("[daemon]\nworkers = \n"),
        (std::vector<std::string>{"heapd.toml:2:11: Error while parsing key-value pair: expected value, saw '\\n'"}));
    EXPECT_EQ(errors_of("[daemon]\nworkers = 1\nworkers = 2\n"),
              (std::vector<std::string>{
                  "heapd.toml:3:11: Error while parsing key-value pair: cannot redefine existing integer 'workers'"}));
    EXPECT_EQ(errors_of("[retention\n"),
              (std::vector<std::string>{"heapd.toml:1:11: Error while parsing table header: expected ']', saw '\\n'"}));
}

TEST(config_file, every_error_is_reported_with_its_line_and_column) {
    const std::string text =
        "[daemon]\n"                   // 1
        "workers = 0\n"                // 2
        "sokcet = \"/x\"\n"            // 3
        "store = \"var/lib/heapd\"\n"  // 4
        "poll_interval = 5\n"          // 5
        "[retention]\n"                // 6
        "keep_count = \"10\"\n"        // 7
        "keep_bytes = \"20X\"\n"       // 8
        "[metrics]\n"                  // 9
        "interval = \"1500ms\"\n"      // 10
        "[[rule]]\n"                   // 11
        "name = \"a\"\n"               // 12
        "command = \"(unclosed\"\n"    // 13
        "[[rule]]\n"                   // 14
        "name = \"a\"\n"               // 15
        "every = \"6x\"\n"             // 16
        "old_gen_percent = 150\n"      // 17
        "  gc_window = \"1m\"\n"       // 18
        "live = \"yes\"\n"             // 19
        "[[rule]]\n"                   // 20
        "main_class = \"x.*\"\n"       // 21
        "[deamon]\n";                  // 22
    const std::vector<std::string> want = {
        "heapd.toml:2:11: daemon.workers must be from 1 to 64, not 0",
        "heapd.toml:3:1: unknown key \"sokcet\" in [daemon] (did you mean \"socket\"?)",
        "heapd.toml:4:9: daemon.store must be an absolute path, not \"var/lib/heapd\"",
        "heapd.toml:5:17: daemon.poll_interval must be a duration like \"30s\", \"10m\", \"6h\", \"1d\" or \"1h30m\" "
        "(a string), not an integer",
        "heapd.toml:7:14: retention.keep_count must be an integer, not a string",
        "heapd.toml:8:14: retention.keep_bytes must be a size like \"512M\" or \"20G\", not \"20X\"",
        "heapd.toml:10:12: metrics.interval must be whole seconds, not \"1500ms\"",
        "heapd.toml:11:1: rule \"a\": no trigger: give every, old_gen_percent, gc_time_percent, predict_full_within, "
        "memory_percent or memory_full_within",
        "heapd.toml:13:11: rule \"a\": command is not a valid regular expression: ",  // + the library's words
        "heapd.toml:15:8: rule name \"a\" is already used by the rule at line 11",
        "heapd.toml:16:9: the rule at line 14: every must be a duration like \"30s\", \"10m\", \"6h\", \"1d\" or "
        "\"1h30m\", not \"6x\"",
        "heapd.toml:17:19: the rule at line 14: old_gen_percent must be a percentage above 0 and at most 100, not 150",
        "heapd.toml:18:15: the rule at line 14: gc_window does nothing without gc_time_percent",
        "heapd.toml:19:8: the rule at line 14: live must be true or false, not a string",
        "heapd.toml:20:1: this rule has no name (name = \"...\": it names the dumps it takes)",
        "heapd.toml:20:1: the rule at line 20: no trigger: give every, old_gen_percent, gc_time_percent, "
        "predict_full_within, memory_percent or memory_full_within",
        "heapd.toml:22:2: unknown key \"deamon\" in the file (tables are [daemon], [retention], [metrics], [oom], "
        "[upload] and "
        "[[rule]]) (did you mean \"daemon\"?)",
    };
    auto got = errors_of(text);
    ASSERT_EQ(got.size(), want.size()) << ::testing::PrintToString(got);
    for (std::size_t i = 0; i < want.size(); ++i) {
        if (want[i].ends_with(": "))
            EXPECT_TRUE(got[i].starts_with(want[i]) && got[i].size() > want[i].size()) << got[i];
        else
            EXPECT_EQ(got[i], want[i]);
    }
}

TEST(config_file, values_of_the_wrong_shape_are_errors) {
    EXPECT_EQ(errors_of("daemon = 3\n"),
              (std::vector<std::string>{"heapd.toml:1:10: daemon must be a table ([daemon]), not an integer"}));
    EXPECT_EQ(errors_of("[rule]\nname = \"x\"\n"),
              (std::vector<std::string>{
                  "heapd.toml:1:1: rule must be an array of tables: write each rule as [[rule]], not a table"}));
    EXPECT_EQ(errors_of("rule = [1]\n"),
              (std::vector<std::string>{"heapd.toml:1:9: each rule must be a table ([[rule]]), not an integer"}));
    EXPECT_EQ(errors_of("[[rule]]\nname = \"a b\"\nevery = \"1h\"\n"),
              (std::vector<std::string>{
                  "heapd.toml:2:8: rule.name must be 1 to 64 letters, digits, '-', '_' or '.', not \"a b\""}));
    EXPECT_EQ(errors_of("[[rule]]\nname = \"a\"\nevery = \"0s\"\n"),
              (std::vector<std::string>{"heapd.toml:3:9: rule \"a\": every must be at least 1s, not \"0s\""}));
    EXPECT_EQ(errors_of("[[rule]]\nname = \"a\"\ngc_time_percent = 0\n"),
              (std::vector<std::string>{
                  "heapd.toml:3:19: rule \"a\": gc_time_percent must be a percentage above 0 and at most 100, not 0"}));
    EXPECT_EQ(errors_of("[[rule]]\nname = \"a\"\ngc_time_percent = nan\n").size(), 1u);
    EXPECT_EQ(errors_of("[[rule]]\nname = \"a\"\nevery = \"1h\"\nold_gen_collections = 2\n"),
              (std::vector<std::string>{
                  "heapd.toml:4:23: rule \"a\": old_gen_collections does nothing without old_gen_percent"}));
    EXPECT_EQ(errors_of("[[rule]]\nname = \"a\"\nevery = \"1h\"\npredict_window = \"5m\"\n"),
              (std::vector<std::string>{
                  "heapd.toml:4:18: rule \"a\": predict_window does nothing without predict_full_within"}));
    EXPECT_EQ(
        errors_of("[[rule]]\nname = \"a\"\npredict_full_within = \"0s\"\n"),
        (std::vector<std::string>{"heapd.toml:3:23: rule \"a\": predict_full_within must be at least 1s, not \"0s\""}));
    EXPECT_EQ(errors_of("[[rule]]\nname = \"a\"\nevery = \"1h\"\nevry = \"2h\"\n"),
              (std::vector<std::string>{"heapd.toml:4:1: unknown key \"evry\" in [[rule]] (did you mean \"every\"?)"}));
    EXPECT_EQ(errors_of("[metrics]\ntextfile = \"metrics.prom\"\n"),
              (std::vector<std::string>{
                  "heapd.toml:2:12: metrics.textfile must be an absolute path or \"\", not \"metrics.prom\""}));
    EXPECT_EQ(errors_of("[daemon]\npoll_interval = \"10ms\"\n"),
              (std::vector<std::string>{"heapd.toml:2:17: daemon.poll_interval must be at least 100ms, not \"10ms\""}));
    EXPECT_EQ(errors_of("[daemon.extra]\n"),
              (std::vector<std::string>{"heapd.toml:1:9: unknown key \"extra\" in [daemon]"}));
}

TEST(config_file, a_file_that_cannot_be_read_is_one_error_for_the_whole_file) {
    test::scratch_dir dir;
    auto c = read_config_file(dir.file("missing.toml"));
    ASSERT_FALSE(c.has_value());
    ASSERT_EQ(c.error().size(), 1u);
    EXPECT_EQ(c.error()[0].describe(), dir.file("missing.toml") + ": cannot read: No such file or directory");
    auto d = read_config_file(dir.path());
    ASSERT_FALSE(d.has_value());
    EXPECT_EQ(d.error()[0].describe(), dir.path() + ": cannot read: not a regular file");
}

TEST(config_file, options_given_override_the_file_and_nothing_else) {
    test::scratch_dir dir;
    std::ofstream(dir.file("heapd.toml")) << "[daemon]\nsocket = \"/run/a.sock\"\nworkers = 4\n"
                                             "[retention]\nkeep_count = 10\nkeep_days = 5\n";
    heapd_config base;
    base.serve.spool_dir = "/from/env";
    config_overrides o;
    o.socket_path = "/run/b.sock";
    o.keep_count = 1;
    o.foreground = true;
    auto c = load_config(dir.file("heapd.toml"), true, base, o);
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->serve.socket_path, "/run/b.sock");
    EXPECT_EQ(c->serve.workers, 4u);
    EXPECT_EQ(c->serve.retention.max_count, 1u);
    EXPECT_EQ(c->serve.retention.max_age_days, 5u);
    EXPECT_EQ(c->serve.spool_dir, "/from/env");
    EXPECT_TRUE(c->serve.foreground);

    // A missing default file is the defaults; a missing file named on the command line is an error.
    auto absent = load_config(dir.file("none.toml"), false, base, o);
    ASSERT_TRUE(absent.has_value());
    EXPECT_EQ(absent->serve.socket_path, "/run/b.sock");
    EXPECT_EQ(absent->serve.workers, 1u);
    auto named = load_config(dir.file("none.toml"), true, base, o);
    ASSERT_FALSE(named.has_value());
    EXPECT_EQ(named.error()[0].line, 0);
    // "" reads no file at all.
    EXPECT_TRUE(load_config("", true, base, o).has_value());
}

TEST(config_file, the_shipped_default_file_is_valid_and_sets_the_defaults) {
    const std::string text = file_text(shipped);
    ASSERT_FALSE(text.empty()) << shipped;
    auto c = parse_config(text, shipped);
    ASSERT_TRUE(c.has_value()) << c.error().front().describe();
    heapd_config defaults;
    EXPECT_EQ(c->serve.socket_path, defaults.serve.socket_path);
    EXPECT_EQ(c->serve.retention.max_count, defaults.serve.retention.max_count);
    EXPECT_TRUE(c->rules.empty());
}

TEST(config_file, every_commented_setting_and_example_of_the_default_file_is_valid) {
    // Uncomment every "#key = value" and "#[[rule]]" line (prose comments start with "# ").
    std::istringstream in(file_text(shipped));
    std::string text, line;
    unsigned uncommented = 0;
    while (std::getline(in, line)) {
        if (line.size() > 1 && line[0] == '#' && line[1] != ' ' && line[1] != '#') {
            line.erase(0, 1);
            ++uncommented;
        }
        text += line + "\n";
    }
    EXPECT_GE(uncommented, 30u);
    auto c = parse_config(text, shipped);
    ASSERT_TRUE(c.has_value()) << c.error().front().describe();
    heapd_config defaults;
    // The commented values are the defaults indeed.
    EXPECT_EQ(c->serve.socket_path, defaults.serve.socket_path);
    EXPECT_EQ(c->serve.store_dir, defaults.serve.store_dir);
    EXPECT_EQ(c->serve.spool_dir, defaults.serve.spool_dir);
    EXPECT_EQ(c->serve.group, defaults.serve.group);
    EXPECT_EQ(c->serve.workers, defaults.serve.workers);
    EXPECT_EQ(c->serve.max_connections, defaults.serve.max_connections);
    EXPECT_EQ(c->serve.shutdown_grace, defaults.serve.shutdown_grace);
    EXPECT_EQ(c->poll_interval, defaults.poll_interval);
    EXPECT_EQ(c->serve.retention.max_count, defaults.serve.retention.max_count);
    EXPECT_EQ(c->serve.retention.max_bytes, defaults.serve.retention.max_bytes);
    EXPECT_EQ(c->serve.retention.max_age_days, defaults.serve.retention.max_age_days);
    EXPECT_EQ(c->metrics.interval, defaults.metrics.interval);
    EXPECT_EQ(c->oom.arm, defaults.oom.arm);
    EXPECT_EQ(c->oom.poll_interval, defaults.oom.poll_interval);
    EXPECT_EQ(c->oom.recheck, defaults.oom.recheck);
    ASSERT_EQ(c->rules.size(), 5u);
    EXPECT_EQ(c->serve.agent_library, defaults.serve.agent_library);
    EXPECT_EQ(c->rules[4].action, rule_action::sample);
    EXPECT_EQ(c->rules[4].sample_interval, dump_rule{}.sample_interval);
    EXPECT_EQ(c->rules[0].every, std::chrono::hours(6));
    EXPECT_EQ(c->rules[1].old_gen_percent, 85.0);
    EXPECT_EQ(c->rules[1].old_gen_collections, 3u);
    EXPECT_EQ(c->rules[2].predict_full_within, std::chrono::minutes(15));
    EXPECT_EQ(c->rules[2].predict_window, std::chrono::minutes(10));
    EXPECT_EQ(c->rules[3].gc_time_percent, 50.0);
    EXPECT_EQ(c->rules[3].gc_window, std::chrono::minutes(2));
}

}  // namespace
}  // namespace heapd::daemon
