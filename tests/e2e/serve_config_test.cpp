// `heapd serve --config FILE`: the file read first and the options given over it; SIGHUP reads it
// again and applies it without stopping the jobs; a broken file keeps the running configuration.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using wire::json;
using wire::reply_kind;

const std::string peer_dump = std::string(HEAPD_PEER_DATA) + "/hprof-64.bin";

// Analyses path to the end; the final reply.
std::optional<wire::reply> analyze(const serve_process& d, const std::string& path) {
    raw_client c(d.socket());
    if (!start_analysis(c, path, true)) return std::nullopt;
    std::optional<wire::reply> r;
    while ((r = c.read_reply(std::chrono::seconds(120))) && r->kind == reply_kind::progress) {}
    return r;
}

json request(const serve_process& d, const std::string& type) {
    raw_client c(d.socket());
    if (!c.send_request({1, type, json::object()})) return nullptr;
    auto r = c.read_reply();
    return r && r->kind == reply_kind::result ? r->result : json(nullptr);
}

// Waits (up to 60 s) until the daemon's log has text.
bool log_shows(const serve_process& d, const std::string& text) {
    for (int i = 0; i < 600; ++i) {
        if (d.log().find(text) != std::string::npos) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
}

// The daemon's dumps once retention has settled on want of them (it runs just after a job's
// result is sent), or what there is after 60 s.
json dumps_when(const serve_process& d, std::size_t want) {
    json dumps;
    for (int i = 0; i < 600; ++i) {
        dumps = request(d, "dumps")["dumps"];
        if (dumps.size() == want) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return dumps;
}

void write(const std::string& path, const std::string& text) {
    // Written beside and renamed, as editors and configuration tools do.
    std::ofstream(path + ".new") << text;
    std::filesystem::rename(path + ".new", path);
}

TEST(serve_config, the_file_is_read_and_options_given_override_it) {
    shared_dir dir;
    const std::string file = dir.file("heapd.toml");
    // The socket and store in the file are overridden by the test's --socket and --store.
    write(file,
          "[daemon]\nsocket = \"/nonexistent/heapd.sock\"\nstore = \"/nonexistent/store\"\nworkers = 2\n"
          "[retention]\nkeep_count = 2\n");
    serve_process d({"--config", file});
    ASSERT_TRUE(d.ready()) << d.log();
    EXPECT_NE(d.log().find("configuration: " + file), std::string::npos) << d.log();
    json status = request(d, "status");
    EXPECT_EQ(status["workers"], 2);
    for (int i = 0; i < 3; ++i) {
        auto r = analyze(d, peer_dump);
        ASSERT_TRUE(r && r->kind == reply_kind::result) << d.log();
    }
    EXPECT_EQ(dumps_when(d, 2).size(), 2u);  // the file's keep_count

    serve_process flagged({"--config", file, "--keep-count", "1", "--workers", "1"});
    ASSERT_TRUE(flagged.ready()) << flagged.log();
    EXPECT_EQ(request(flagged, "status")["workers"], 1);
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(analyze(flagged, peer_dump));
    EXPECT_EQ(dumps_when(flagged, 1).size(), 1u);  // the option's
}

TEST(serve_config, a_missing_or_invalid_file_named_on_the_command_line_stops_it_before_it_serves) {
    shared_dir dir;
    const std::vector<std::string> base = {heapd_binary(),     "serve",   "--foreground",   "--socket",
                                           dir.file("s.sock"), "--store", dir.file("store")};
    auto with = [&](const std::string& config) {
        auto argv = base;
        argv.insert(argv.end(), {"--config", config});
        return run_command(argv);
    };
    auto missing = with(dir.file("none.toml"));
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_EQ(missing.err, "heapd: " + dir.file("none.toml") + ": cannot read: No such file or directory\n");
    write(dir.file("bad.toml"), "[daemon]\nworkers = 100\n");
    auto bad = with(dir.file("bad.toml"));
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_EQ(bad.err, "heapd: " + dir.file("bad.toml") + ":2:11: daemon.workers must be from 1 to 64, not 100\n");
    EXPECT_FALSE(std::filesystem::exists(dir.file("s.sock")));
}

TEST(serve_config, sighup_applies_a_new_retention_while_an_analysis_runs_to_its_end) {
    const std::string dump = big_dump();
    shared_dir dir;
    const std::string file = dir.file("heapd.toml");
    write(file, "[retention]\nkeep_count = 10\n");
    serve_process d({"--config", file});
    ASSERT_TRUE(d.ready()) << d.log();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(analyze(d, peer_dump)) << d.log();
    ASSERT_EQ(request(d, "dumps")["dumps"].size(), 3u);

    raw_client running(d.socket());
    ASSERT_TRUE(start_analysis(running, dump, true));
    auto first = running.read_reply();
    ASSERT_TRUE(first && first->kind == reply_kind::progress) << d.log();
    write(file, "# fewer dumps\n[retention]\nkeep_count = 1\n");
    ASSERT_EQ(::kill(d.pid(), SIGHUP), 0);
    ASSERT_TRUE(log_shows(d, "configuration reloaded: retention.keep_count 10 -> 1")) << d.log();
    ASSERT_TRUE(log_shows(d, "retention: removed dump")) << d.log();

    // The analysis under way was not disturbed.
    std::optional<wire::reply> last;
    while ((last = running.read_reply(std::chrono::seconds(120))) && last->kind == reply_kind::progress) {}
    ASSERT_TRUE(last && last->kind == reply_kind::result) << d.log();
    EXPECT_EQ(last->result["job"]["state"], "done");
    // The new policy keeps one dump: the newest.
    json dumps = dumps_when(d, 1);
    ASSERT_EQ(dumps.size(), 1u) << dumps.dump();
    EXPECT_EQ(dumps[0]["id"], last->result["dump"]["id"]);
    EXPECT_EQ(d.log().find("needs a restart"), std::string::npos) << d.log();
    EXPECT_EQ(d.stop(), 0);
}

TEST(serve_config, a_broken_file_on_sighup_keeps_the_daemon_serving_as_before) {
    shared_dir dir;
    const std::string file = dir.file("heapd.toml");
    write(file, "[retention]\nkeep_count = 10\n");
    serve_process d({"--config", file});
    ASSERT_TRUE(d.ready()) << d.log();

    write(file, "[retention]\nkeep_count = \"one\"\nkeep_days = 5\n[[rule]]\nname = \"r\"\n");
    ASSERT_EQ(::kill(d.pid(), SIGHUP), 0);
    ASSERT_TRUE(log_shows(d, "configuration not reloaded (2 errors): keeping the running one")) << d.log();
    EXPECT_NE(d.log().find(file + ":2:14: retention.keep_count must be an integer, not a string"), std::string::npos)
        << d.log();
    EXPECT_NE(d.log().find(file + ":4:1: rule \"r\": no trigger"), std::string::npos) << d.log();
    // Still serving, still keeping 10.
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(analyze(d, peer_dump)) << d.log();
    EXPECT_EQ(request(d, "dumps")["dumps"].size(), 2u);

    // A syntax error too; then the file fixed: the change is told from the running 10.
    write(file, "[retention\n");
    ASSERT_EQ(::kill(d.pid(), SIGHUP), 0);
    ASSERT_TRUE(log_shows(d, "configuration not reloaded (1 error)")) << d.log();
    write(file, "[retention]\nkeep_count = 1\n");
    ASSERT_EQ(::kill(d.pid(), SIGHUP), 0);
    ASSERT_TRUE(log_shows(d, "configuration reloaded: retention.keep_count 10 -> 1")) << d.log();
    EXPECT_EQ(dumps_when(d, 1).size(), 1u);
}

TEST(serve_config, what_only_a_restart_changes_is_told_and_kept) {
    shared_dir dir;
    const std::string file = dir.file("heapd.toml");
    write(file, "[daemon]\nworkers = 1\n");
    serve_process d({"--config", file, "--group", "root"});
    ASSERT_TRUE(d.ready()) << d.log();
    write(file, "[daemon]\nworkers = 3\nmax_connections = 8\n[[rule]]\nname = \"nightly\"\nevery = \"1d\"\n");
    ASSERT_EQ(::kill(d.pid(), SIGHUP), 0);
    ASSERT_TRUE(log_shows(d, "configuration reloaded: daemon.max_connections 256 -> 8; rule added: \"nightly\""))
        << d.log();
    EXPECT_NE(d.log().find("configuration: daemon.workers 1 -> 3 needs a restart to take effect"), std::string::npos)
        << d.log();
    EXPECT_EQ(request(d, "status")["workers"], 1);
    // --group was given: the file cannot change it, so it is no change at all.
    EXPECT_EQ(d.log().find("daemon.group"), std::string::npos) << d.log();
}

// The value of a metric line (name and labels exactly as written) in Prometheus text, or -1.
double metric(const std::string& text, const std::string& series) {
    std::size_t at = text.find("\n" + series + " ");
    return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 2));
}

TEST(serve_config, rules_and_metrics_come_from_the_file_and_change_on_sighup) {
    shared_dir dir;
    // A marker only this test's JVM has in its command line: the rule dumps no other JVM.
    const std::string marker = "heapd.test.rule." + std::to_string(::getpid());
    demo_jvm jvm(java_main{"Sessions"}, {"-Xmx128m", "-D" + marker + "=1"}, {"1000"});
    ASSERT_TRUE(jvm.ready());
    const std::string file = dir.file("heapd.toml"), prom = dir.file("heapd.prom");
    const std::string rule =
        "[[rule]]\nname = \"tick\"\ncommand = \"" + marker + "\"\nevery = \"1s\"\ncooldown = \"1s\"\n";
    write(file, "[daemon]\npoll_interval = \"200ms\"\n[metrics]\ntextfile = \"" + prom + "\"\ninterval = \"1s\"\n" +
                    rule + "max_dumps = 1\n");
    serve_process d({"--config", file});
    ASSERT_TRUE(d.ready()) << d.log();

    // The rule dumps the JVM once (its cap), about a second after the daemon first saw it.
    json dumps = dumps_when(d, 1);
    ASSERT_EQ(dumps.size(), 1u) << dumps.dump() << d.log();
    EXPECT_EQ(dumps[0]["trigger"], "rule:tick");
    EXPECT_EQ(dumps[0]["pid"], jvm.pid());
    EXPECT_TRUE(log_shows(d, "rule tick: dumping pid " + std::to_string(jvm.pid()))) << d.log();
    std::this_thread::sleep_for(std::chrono::seconds(3));  // a few more periods: still one
    EXPECT_EQ(request(d, "dumps")["dumps"].size(), 1u);

    // The metrics file the config names counts it.
    double counted = -1;
    for (int i = 0; i < 100 && counted != 1; ++i) {
        std::ifstream in(prom);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        counted = metric(text, "heapd_dumps_total{trigger=\"rule:tick\"}");
        if (counted != 1) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(counted, 1) << d.log();

    // A higher cap on SIGHUP: the rule, keeping its name and its count, dumps once more.
    write(file, "[daemon]\npoll_interval = \"200ms\"\n[metrics]\ntextfile = \"" + prom + "\"\ninterval = \"1s\"\n" +
                    rule + "max_dumps = 2\n");
    ASSERT_EQ(::kill(d.pid(), SIGHUP), 0);
    ASSERT_TRUE(log_shows(d, "configuration reloaded")) << d.log();
    dumps = dumps_when(d, 2);
    ASSERT_EQ(dumps.size(), 2u) << dumps.dump() << d.log();
    std::this_thread::sleep_for(std::chrono::seconds(3));
    EXPECT_EQ(request(d, "dumps")["dumps"].size(), 2u);
    // The second report says what changed since the first.
    auto report = run_heapctl(d, {"report", std::to_string(jvm.pid())});
    EXPECT_NE(report.out.find("Since the previous dump of this JVM"), std::string::npos) << report.out;

    // Without the metrics file in the config, the daemon stops writing it and removes it.
    write(file, "[daemon]\npoll_interval = \"200ms\"\n" + rule + "max_dumps = 2\n");
    ASSERT_EQ(::kill(d.pid(), SIGHUP), 0);
    bool removed = false;
    for (int i = 0; i < 100 && !(removed = !std::filesystem::exists(prom)); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE(removed) << d.log();
    EXPECT_EQ(d.stop(), 0);
}

}  // namespace
}  // namespace heapd::test
