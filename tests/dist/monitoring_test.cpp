// The alerting rules and the Grafana dashboard heapd ships (dist/prometheus, dist/grafana) against
// what heapd really exports: every metric they name is one a real daemon (watching a real JVM) or a
// real `heapd upload` pass wrote, every dashboard query is PromQL that promtool accepts, and every
// panel reads the dashboard's data source. (promtool test rules covers each alert's firing:
// tests/dist/alert_rules_check.sh.)
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "daemon/metrics/metrics.h"
#include "formats/wire/protocol.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using wire::json;

std::string read_whole(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string dist_file(const std::string& name) { return std::string(HEAPD_SOURCE_DIR) + "/dist/" + name; }

// The metric families a Prometheus text declares (# TYPE), with a histogram's _bucket, _sum and _count.
void add_families(const std::string& text, std::set<std::string>& names) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        std::istringstream words(line);
        std::string hash, type, name, kind;
        if (!(words >> hash >> type >> name >> kind) || hash != "#" || type != "TYPE") continue;
        names.insert(name);
        if (kind == "histogram")
            for (const char* suffix : {"_bucket", "_sum", "_count"}) names.insert(name + suffix);
    }
}

// Every heapd_* (and node_*) metric name in text.
std::set<std::string> names_in(const std::string& text) {
    std::set<std::string> out;
    static const std::regex name(R"(\b(heapd|node)_[a-z0-9_]+)");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator(); ++it)
        out.insert(it->str());
    return out;
}

// What a real daemon watching a real JVM, and a real upload pass, export.
std::set<std::string> exported_names() {
    std::set<std::string> names;
    scratch_dir dir;
    const std::string textfile = dir.file("heapd.prom");
    demo_jvm jvm({"-Xmx64m"});
    EXPECT_TRUE(jvm.ready());
    serve_process d({"--metrics-file", textfile, "--metrics-interval", "1"});
    EXPECT_TRUE(d.ready()) << d.log();
    const std::string pid = "pid=\"" + std::to_string(jvm.pid()) + "\"";
    for (int i = 0; i < 300 && read_whole(textfile).find(pid) == std::string::npos; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::string daemon_text = read_whole(textfile);
    EXPECT_NE(daemon_text.find(pid), std::string::npos) << daemon_text;
    add_families(daemon_text, names);
    // An upload pass over an empty store: no request made, its metrics written.
    std::ofstream(dir.file("credentials")) << "KEY:SECRET\n";
    ::chmod(dir.file("credentials").c_str(), 0600);
    std::ofstream(dir.file("heapd.toml"))
        << "[daemon]\nstore = \"" << d.store() << "\"\n[upload]\nendpoint = "
        << "\"http://127.0.0.1:9\"\nbucket = \"heapd-test\"\ncredentials_file = \"" << dir.file("credentials")
        << "\"\nstate = \"" << dir.file("state") << "\"\nmetrics_textfile = \"" << dir.file("upload.prom") << "\"\n";
    auto up = run_command({heapd_binary(), "upload", "--config", dir.file("heapd.toml"), "--once"});
    EXPECT_EQ(up.exit_code, 0) << up.err;
    add_families(read_whole(dir.file("upload.prom")), names);
    // The families a JVM has only once known (the after-collection occupancy, the trend), as the
    // daemon's renderer writes them for a JVM with every figure.
    daemon::metrics_snapshot full;
    daemon::jvm_metrics j;
    j.pid = 1;
    j.old_used = j.old_max = j.resident = j.memory_limit = 1;
    j.old_occupancy = j.after_gc_occupancy = j.predicted_full_seconds = j.gc_time_share = 0.5;
    full.jvms.push_back(j);
    full.daemon.jvms_watched = 1;
    add_families(daemon::render_metrics(full), names);
    // node_exporter's own, for a textfile heapd stopped writing.
    names.insert("node_textfile_mtime_seconds");
    return names;
}

// PromQL with Grafana's variables as a query would see them.
std::string as_promql(std::string expr) {
    for (auto [from, to] : {std::pair<std::string, std::string>{"$__rate_interval", "5m"},
                            {"$__range", "1h"},
                            {"$instance", ".*"},
                            {"$main_class", ".*"}})
        for (auto at = expr.find(from); at != std::string::npos; at = expr.find(from, at + to.size()))
            expr.replace(at, from.size(), to);
    return expr;
}

TEST(monitoring, the_rules_and_the_dashboard_name_only_metrics_heapd_exports) {
    const std::set<std::string> exported = exported_names();
    ASSERT_TRUE(exported.contains("heapd_jvm_heap_used_bytes")) << "the daemon wrote no JVM series";
    ASSERT_TRUE(exported.contains("heapd_upload_queue_entries")) << "the upload pass wrote no metrics";
    // The rules' expressions, and the dashboard's queries and variables.
    std::string rules;
    std::istringstream in(read_whole(dist_file("prometheus/heapd-alerts.yml")));
    for (std::string line; std::getline(in, line);)
        if (line.find("expr:") != std::string::npos) rules += line + "\n";
    std::string queries;
    const json dash = json::parse(read_whole(dist_file("grafana/heapd-dashboard.json")));
    for (const json& p : dash.at("panels"))
        if (p.contains("targets"))
            for (const json& t : p.at("targets")) queries += t.at("expr").get<std::string>() + "\n";
    for (const json& v : dash.at("templating").at("list"))
        if (v.contains("definition")) queries += v.at("definition").get<std::string>() + "\n";
    for (const auto& [what, text] : {std::pair{"the alert rules", rules}, std::pair{"the dashboard", queries}}) {
        const std::set<std::string> used = names_in(text);
        EXPECT_GT(used.size(), 8u) << what;
        for (const std::string& name : used) EXPECT_TRUE(exported.contains(name)) << what << " name " << name;
    }
}

TEST(monitoring, every_dashboard_query_is_promql_and_reads_the_dashboards_data_source) {
    const json dash = json::parse(read_whole(dist_file("grafana/heapd-dashboard.json")), nullptr, false);
    ASSERT_FALSE(dash.is_discarded());
    EXPECT_EQ(dash.value("uid", ""), "heapd");
    std::set<int> ids;
    std::string rules = "groups:\n  - name: dashboard\n    rules:\n";
    int queries = 0;
    for (const json& p : dash.at("panels")) {
        EXPECT_TRUE(ids.insert(p.at("id").get<int>()).second) << "two panels with id " << p.at("id");
        if (p.value("type", "") == "row") continue;
        EXPECT_EQ(p.at("datasource").at("uid"), "${datasource}") << p.value("title", "");
        EXPECT_FALSE(p.value("description", "").empty()) << p.value("title", "") << " says nothing of what it shows";
        for (const json& t : p.at("targets")) {
            EXPECT_EQ(t.at("datasource").at("uid"), "${datasource}");
            rules += "      - record: dashboard:query" + std::to_string(++queries) +
                     "\n        expr: " + json(as_promql(t.at("expr").get<std::string>())).dump() + "\n";
        }
    }
    EXPECT_GE(queries, 20);
    scratch_dir dir;
    std::ofstream(dir.file("queries.yml")) << rules;
    auto checked = run_command({"/usr/bin/promtool", "check", "rules", dir.file("queries.yml")});
    EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err << rules;
    EXPECT_NE(checked.out.find("SUCCESS: " + std::to_string(queries) + " rules found"), std::string::npos)
        << checked.out;
}

}  // namespace
}  // namespace heapd::test
