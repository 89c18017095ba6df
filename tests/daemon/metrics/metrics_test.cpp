// The Prometheus text of the daemon's metrics, rendered from plain data: names, HELP and TYPE,
// escaping of label values, histograms, what a user who is not an admin sees; read back with a
// strict parser and with promtool.
#include "daemon/metrics/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "support/prometheus_text.h"

namespace heapd::daemon {
namespace {

using test::parse_prometheus_text;

jvm_metrics a_jvm(std::int64_t pid, uid_t uid, std::string main_class, std::string user) {
    jvm_metrics j;
    j.pid = pid;
    j.uid = uid;
    j.main_class = std::move(main_class);
    j.user = std::move(user);
    j.heap_used = 100 << 20;
    j.heap_committed = 200 << 20;
    j.heap_max = 1024 << 20;
    j.old_used = 60 << 20;
    j.old_max = 768 << 20;
    j.old_occupancy = 60.0 / 768;
    j.after_gc_occupancy = 0.05;
    j.predicted_full_seconds = 840;
    j.gc_seconds = 1.25;
    j.gc_time_share = 0.0125;
    j.uptime_seconds = 100;
    j.resident = 300 << 20;
    j.memory_limit = 400 << 20;
    return j;
}

metrics_snapshot a_snapshot() {
    metrics_snapshot s;
    daemon_metrics& d = s.daemon;
    d.version = "0.1.0";
    d.protocol = 1;
    d.start_time_seconds = 1700000000.5;
    d.dumps = {{"request", 2}, {"oom", 0}, {"rule:old gen \"high\"", 1}};
    d.dump_failures = {{"request", 1}, {"oom", 0}};
    d.analysis["dump"] = seconds_histogram::with_bounds(analysis_seconds_bounds());
    d.analysis["dump"].observe(0.7);
    d.analysis["dump"].observe(3);
    d.analysis["dump"].observe(5000);
    d.analysis["analyze"] = seconds_histogram::with_bounds(analysis_seconds_bounds());
    d.jobs_queued = 2;
    d.jobs_running = 1;
    d.store = {{0, 1000}, {1001, 500}, {1002, 250}};
    s.jvms.push_back(a_jvm(42, 0, "com.example.Main", "root"));
    s.jvms.push_back(a_jvm(4242, 1001, "we\"ird\\path\nname.jar", "o'brien \\ \"x\""));
    s.jvms.back().pod_namespace = "shop";
    s.jvms.back().pod = "checkout-7d9c5b8f6d-x2kq9";
    s.jvms.back().container = "app";
    s.jvms.push_back(a_jvm(777, 0, "caf\xe9\xff.jar", "root"));
    s.jvm_owners = {0, 1001, 1002};
    return s;
}

TEST(metrics, label_values_and_help_are_escaped_as_the_format_says) {
    EXPECT_EQ(escape_label_value("plain"), "plain");
    EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
    EXPECT_EQ(escape_label_value("unicode é € 𝄞"), "unicode é € 𝄞");
    // Not UTF-8 (a Latin-1 name, a stray continuation byte, an overlong slash, a surrogate, cut
    // short): each bad byte becomes U+FFFD.
    EXPECT_EQ(escape_label_value("caf\xe9.jar"), "caf\xef\xbf\xbd.jar");
    EXPECT_EQ(escape_label_value("\x80"
                                 "a"),
              "\xef\xbf\xbd"
              "a");
    EXPECT_EQ(escape_label_value("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");
    EXPECT_EQ(escape_label_value("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    EXPECT_EQ(escape_label_value("x\xe2\x82"), "x\xef\xbf\xbd\xef\xbf\xbd");
    EXPECT_EQ(escape_help("a\\b\"c\nd"), "a\\\\b\"c\\nd");  // quotes stay in HELP
}

TEST(metrics, values_read_back_the_same) {
    EXPECT_EQ(format_value(0), "0");
    EXPECT_EQ(format_value(1073741824), "1073741824");
    EXPECT_EQ(format_value(-3), "-3");
    EXPECT_EQ(format_value(0.5), "0.5");
    EXPECT_EQ(format_value(NAN), "NaN");
    EXPECT_EQ(format_value(INFINITY), "+Inf");
    EXPECT_EQ(format_value(-INFINITY), "-Inf");
    for (double v : {0.1, 1.0 / 3, 1e-9, 6.02e23, 1152921504606846976.0, 1700000000.5})
        EXPECT_EQ(std::strtod(format_value(v).c_str(), nullptr), v) << format_value(v);
}

TEST(metrics, every_family_has_help_and_type_and_a_conventional_name) {
    const std::string text = render_metrics(a_snapshot());
    auto e = parse_prometheus_text(text);
    ASSERT_TRUE(e) << e.error() << "\n" << text;
    EXPECT_EQ(test::promtool_check(text), "") << text;
    for (const auto& [name, f] : e->families) {
        EXPECT_TRUE(name.starts_with("heapd_")) << name;
        EXPECT_FALSE(f.help.empty()) << name;
        const bool unit = name.ends_with("_bytes") || name.ends_with("_seconds") || name.ends_with("_ratio") ||
                          name.ends_with("_total") || name.ends_with("_info");
        const bool count = name == "heapd_jobs" || name == "heapd_jvms" || name == "heapd_store_entries" ||
                           name == "heapd_oom_arming_jvms";
        EXPECT_TRUE(unit || count) << name << " has no unit suffix";
        if (f.type == "counter") {
            EXPECT_TRUE(name.ends_with("_total")) << name;
        }
    }
    const std::map<std::string, std::string> types = {
        {"heapd_build_info", "gauge"},
        {"heapd_start_time_seconds", "gauge"},
        {"heapd_jobs", "gauge"},
        {"heapd_store_entries", "gauge"},
        {"heapd_store_bytes", "gauge"},
        {"heapd_dumps_total", "counter"},
        {"heapd_dump_failures_total", "counter"},
        {"heapd_analysis_duration_seconds", "histogram"},
        {"heapd_jvms", "gauge"},
        {"heapd_oom_arming_jvms", "gauge"},
        {"heapd_jvm_heap_used_bytes", "gauge"},
        {"heapd_jvm_heap_committed_bytes", "gauge"},
        {"heapd_jvm_heap_max_bytes", "gauge"},
        {"heapd_jvm_old_gen_used_bytes", "gauge"},
        {"heapd_jvm_old_gen_max_bytes", "gauge"},
        {"heapd_jvm_old_gen_occupancy_ratio", "gauge"},
        {"heapd_jvm_after_gc_occupancy_ratio", "gauge"},
        {"heapd_jvm_predicted_full_seconds", "gauge"},
        {"heapd_jvm_gc_time_ratio", "gauge"},
        {"heapd_jvm_gc_seconds_total", "counter"},
        {"heapd_jvm_uptime_seconds", "gauge"},
        {"heapd_jvm_resident_bytes", "gauge"},
        {"heapd_jvm_memory_limit_bytes", "gauge"},
        {"heapd_jvm_memory_limit_ratio", "gauge"},
    };
    for (const auto& [name, type] : types) {
        auto it = e->families.find(name);
        ASSERT_NE(it, e->families.end()) << name << " missing";
        EXPECT_EQ(it->second.type, type) << name;
    }
    EXPECT_EQ(e->families.size(), types.size());
    // HELP and TYPE come once, just before the family's samples.
    EXPECT_NE(text.find("# HELP heapd_dumps_total Heap dumps taken and kept, by what triggered them.\n"
                        "# TYPE heapd_dumps_total counter\nheapd_dumps_total{trigger=\"oom\"} 0\n"),
              std::string::npos)
        << text;
}

TEST(metrics, the_jvm_series_carry_their_labels_escaped_and_read_back_whole) {
    const std::string text = render_metrics(a_snapshot());
    auto e = parse_prometheus_text(text);
    ASSERT_TRUE(e) << e.error();
    EXPECT_NE(text.find("heapd_jvm_heap_used_bytes{pid=\"4242\",main_class=\"we\\\"ird\\\\path\\nname.jar\","
                        "user=\"o'brien \\\\ \\\"x\\\"\",namespace=\"shop\",pod=\"checkout-7d9c5b8f6d-x2kq9\","
                        "container=\"app\"} 104857600\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(e->value("heapd_jvm_heap_used_bytes",
                       {{"pid", "4242"}, {"main_class", "we\"ird\\path\nname.jar"}, {"user", "o'brien \\ \"x\""}}),
              100 << 20);
    const std::map<std::string, std::string> root = {
        {"pid", "42"}, {"main_class", "com.example.Main"}, {"user", "root"}};
    EXPECT_EQ(e->value("heapd_jvm_heap_committed_bytes", root), 200 << 20);
    EXPECT_EQ(e->value("heapd_jvm_heap_max_bytes", root), 1024 << 20);
    EXPECT_EQ(e->value("heapd_jvm_old_gen_used_bytes", root), 60 << 20);
    EXPECT_EQ(e->value("heapd_jvm_old_gen_max_bytes", root), 768 << 20);
    EXPECT_DOUBLE_EQ(*e->value("heapd_jvm_old_gen_occupancy_ratio", root), 60.0 / 768);
    EXPECT_DOUBLE_EQ(*e->value("heapd_jvm_after_gc_occupancy_ratio", root), 0.05);
    EXPECT_EQ(e->value("heapd_jvm_predicted_full_seconds", root), 840);
    EXPECT_EQ(e->value("heapd_jvm_gc_seconds_total", root), 1.25);
    EXPECT_EQ(e->value("heapd_jvm_gc_time_ratio", root), 0.0125);
    EXPECT_EQ(e->value("heapd_jvm_uptime_seconds", root), 100);
    EXPECT_EQ(e->value("heapd_jvm_resident_bytes", root), 300 << 20);
    EXPECT_EQ(e->value("heapd_jvm_memory_limit_bytes", root), 400 << 20);
    EXPECT_DOUBLE_EQ(*e->value("heapd_jvm_memory_limit_ratio", root), 0.75);
    EXPECT_EQ(e->value("heapd_jvms"), 3);
    // A main class that is not UTF-8 still gives a text scrapers take.
    EXPECT_EQ(
        e->value("heapd_jvm_heap_used_bytes", {{"pid", "777"}, {"main_class", "caf\xef\xbf\xbd\xef\xbf\xbd.jar"}}),
        100 << 20);
}

TEST(metrics, daemon_series_count_dumps_failures_jobs_and_the_store) {
    auto e = parse_prometheus_text(render_metrics(a_snapshot()));
    ASSERT_TRUE(e) << e.error();
    EXPECT_EQ(e->value("heapd_build_info", {{"version", "0.1.0"}, {"protocol", "1"}}), 1);
    EXPECT_EQ(e->value("heapd_start_time_seconds"), 1700000000.5);
    EXPECT_EQ(e->value("heapd_dumps_total", {{"trigger", "request"}}), 2);
    EXPECT_EQ(e->value("heapd_dumps_total", {{"trigger", "rule:old gen \"high\""}}), 1);
    EXPECT_EQ(e->value("heapd_dump_failures_total", {{"trigger", "request"}}), 1);
    EXPECT_EQ(e->value("heapd_jobs", {{"state", "queued"}}), 2);
    EXPECT_EQ(e->value("heapd_jobs", {{"state", "running"}}), 1);
    EXPECT_EQ(e->value("heapd_store_entries"), 3);
    EXPECT_EQ(e->value("heapd_store_bytes"), 1750);
    // Cumulative buckets: 0.7 s in le=1 and above, 3 s from le=5, 5000 s only in +Inf.
    const std::map<std::string, std::string> dump = {{"kind", "dump"}};
    auto bucket = [&](const std::string& le) {
        return e->value("heapd_analysis_duration_seconds_bucket", {{"kind", "dump"}, {"le", le}});
    };
    EXPECT_EQ(bucket("0.5"), 0);
    EXPECT_EQ(bucket("1"), 1);
    EXPECT_EQ(bucket("2.5"), 1);
    EXPECT_EQ(bucket("5"), 2);
    EXPECT_EQ(bucket("1800"), 2);
    EXPECT_EQ(bucket("+Inf"), 3);
    EXPECT_EQ(e->value("heapd_analysis_duration_seconds_count", dump), 3);
    EXPECT_DOUBLE_EQ(*e->value("heapd_analysis_duration_seconds_sum", dump), 5003.7);
    EXPECT_EQ(e->value("heapd_analysis_duration_seconds_count", {{"kind", "analyze"}}), 0);
}

TEST(metrics, a_bound_counts_in_its_own_bucket) {
    auto h = seconds_histogram::with_bounds({5, 1});
    h.observe(1);
    h.observe(1.0000001);
    h.observe(7);
    EXPECT_EQ(h.bounds, (std::vector<double>{1, 5}));
    EXPECT_EQ(h.counts, (std::vector<std::uint64_t>{1, 1, 1}));
    EXPECT_EQ(h.count, 3u);
}

TEST(metrics, jvms_without_an_old_generation_or_any_jvm_still_render_valid_text) {
    metrics_snapshot s = a_snapshot();
    s.jvms[0].old_used.reset();
    s.jvms[0].old_max.reset();
    s.jvms[0].old_occupancy.reset();
    s.jvms[0].gc_time_share.reset();
    s.jvms[0].after_gc_occupancy.reset();
    s.jvms[0].predicted_full_seconds.reset();
    auto e = parse_prometheus_text(render_metrics(s));
    ASSERT_TRUE(e) << e.error();
    EXPECT_TRUE(e->find("heapd_jvm_old_gen_used_bytes", {{"pid", "42"}}).empty());
    EXPECT_TRUE(e->find("heapd_jvm_predicted_full_seconds", {{"pid", "42"}}).empty());
    EXPECT_TRUE(e->find("heapd_jvm_gc_time_ratio", {{"pid", "42"}}).empty());
    EXPECT_EQ(e->find("heapd_jvm_old_gen_used_bytes", {{"pid", "4242"}}).size(), 1u);
    EXPECT_EQ(e->find("heapd_jvm_heap_used_bytes", {{"pid", "42"}}).size(), 1u);

    metrics_snapshot none;
    none.daemon.version = "0.1.0";
    const std::string text = render_metrics(none);
    auto empty = parse_prometheus_text(text);
    ASSERT_TRUE(empty) << empty.error() << "\n" << text;
    EXPECT_EQ(test::promtool_check(text), "") << text;
    EXPECT_EQ(empty->value("heapd_jvms"), 0);
    for (const auto& [name, f] : empty->families) EXPECT_FALSE(name.starts_with("heapd_jvm_")) << name;
}

TEST(metrics, a_user_who_is_not_an_admin_sees_their_own_jvms_and_dumps) {
    metrics_snapshot mine = visible_to(a_snapshot(), 1001);
    ASSERT_EQ(mine.jvms.size(), 1u);
    EXPECT_EQ(mine.jvms[0].pid, 4242);
    EXPECT_EQ(mine.jvm_owners, std::vector<uid_t>{1001});
    ASSERT_EQ(mine.daemon.store.size(), 1u);
    EXPECT_EQ(mine.daemon.store[0].bytes, 500u);
    auto e = parse_prometheus_text(render_metrics(mine));
    ASSERT_TRUE(e) << e.error();
    EXPECT_TRUE(e->find("heapd_jvm_heap_used_bytes", {{"pid", "42"}}).empty());
    EXPECT_EQ(e->value("heapd_store_entries"), 1);
    EXPECT_EQ(e->value("heapd_dumps_total", {{"trigger", "request"}}), 2);  // the daemon's counters stay whole

    metrics_snapshot nobody = visible_to(a_snapshot(), 5555);
    EXPECT_TRUE(nobody.jvms.empty());
    EXPECT_TRUE(nobody.daemon.store.empty());
}

TEST(metrics, the_strict_reader_refuses_what_breaks_the_format) {
    // The tests' own reader must fail on broken text, or the tests above prove nothing.
    const char* bad[] = {
        "heapd_x 1\n",                                                     // no HELP, TYPE
        "# HELP heapd_x x\n# TYPE heapd_x gauge\nheapd_x{a=\"b} 1\n",      // unclosed value
        "# HELP heapd_x x\n# TYPE heapd_x gauge\nheapd_x{a=\"\\q\"} 1\n",  // bad escape
        "# HELP heapd_x x\n# TYPE heapd_x gauge\nheapd_x 1\nheapd_x 2\n",  // duplicate series
        "# HELP heapd_x x\n# TYPE heapd_x counter\nheapd_x 1\n",           // counter without _total
        "# HELP heapd_x x\n# TYPE heapd_x gauge\nheapd_x one\n",           // not a number
        "# HELP heapd_x x\n# TYPE heapd_x gauge\nheapd_x 1",               // no final line feed
        "# HELP heapd_h h\n# TYPE heapd_h histogram\nheapd_h_bucket{le=\"1\"} 2\nheapd_h_bucket{le=\"+Inf\"} 1\n"
        "heapd_h_sum 1\nheapd_h_count 1\n",                     // not cumulative
        "# HELP heapd_x x\n# TYPE heapd_x gauge\nheapd_y 1\n",  // outside its family
    };
    for (const char* text : bad) EXPECT_FALSE(parse_prometheus_text(text)) << text;
    EXPECT_TRUE(parse_prometheus_text("# HELP heapd_x x\n# TYPE heapd_x gauge\nheapd_x{a=\"\\\"\"} 1\n"));
}

}  // namespace
}  // namespace heapd::daemon
