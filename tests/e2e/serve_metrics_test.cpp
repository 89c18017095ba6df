// The daemon's metrics end to end: a real daemon and real JVMs; `heapctl metrics` and the
// node_exporter textfile both pass promtool and the tests' strict reader, show the JVM's heap as
// jstat reads it, count a dump (and its analysis) and a failed dump by trigger, show a user who is
// not an admin only their own JVMs, and the textfile is replaced whole at every interval.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/prometheus_text.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

namespace fs = std::filesystem;
using labels = std::map<std::string, std::string>;

command_result heapctl(const serve_process& d, std::vector<std::string> args, const temp_user* user = nullptr) {
    args.insert(args.begin(), {heapctl_binary(), "--socket", d.socket()});
    if (user != nullptr)
        args.insert(args.begin(), {"setpriv", "--reuid=" + std::to_string(user->uid()),
                                   "--regid=" + std::to_string(user->gid()), "--clear-groups"});
    return run_command(args);
}

// `heapctl metrics`, checked by promtool and read by the strict reader.
prom_exposition metrics_of(const serve_process& d, const temp_user* user = nullptr) {
    auto r = heapctl(d, {"metrics"}, user);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(promtool_check(r.out), "") << r.out;
    auto e = parse_prometheus_text(r.out);
    EXPECT_TRUE(e) << (e ? "" : e.error()) << "\n" << r.out;
    return e ? *e : prom_exposition{};
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The JVM's series of a family: its one sample with that pid.
std::optional<double> jvm_value(const prom_exposition& e, const std::string& name, pid_t pid) {
    return e.value(name, {{"pid", std::to_string(pid)}});
}

TEST(serve_metrics, heapctl_metrics_shows_a_jvm_and_counts_a_dump_and_its_analysis) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    demo_jvm jvm(java_main{"Sessions"}, {"-Xmx256m", "-XX:+UseG1GC"}, {"20000"});
    ASSERT_TRUE(jvm.ready());
    const pid_t pid = jvm.pid();

    auto e = metrics_of(d);
    const labels mine = {{"pid", std::to_string(pid)}, {"main_class", "Sessions"}, {"user", "root"}};
    auto used = e.value("heapd_jvm_heap_used_bytes", mine);
    auto max = e.value("heapd_jvm_heap_max_bytes", mine);
    ASSERT_TRUE(used && max) << "no series of pid " << pid;
    EXPECT_GT(*used, 0);
    EXPECT_LE(*used, *max);
    EXPECT_NEAR(*max, 256.0 * 1024 * 1024, 1 << 20);  // -Xmx256m (G1's counters add a few bytes)
    EXPECT_LE(*used, *jvm_value(e, "heapd_jvm_heap_committed_bytes", pid));
    // What jstat reads from the same JVM's hsperfdata, within a few MiB (the JVM idles).
    auto gc = jstat_gc(pid);
    const double jstat_used = (gc["S0U"] + gc["S1U"] + gc["EU"] + gc["OU"]) * 1024;
    EXPECT_NEAR(*used, jstat_used, 4 << 20) << "jstat: " << jstat_used;
    EXPECT_NEAR(*jvm_value(e, "heapd_jvm_old_gen_used_bytes", pid), gc["OU"] * 1024, 4 << 20);
    const double occupancy = *jvm_value(e, "heapd_jvm_old_gen_occupancy_ratio", pid);
    EXPECT_GE(occupancy, 0);
    EXPECT_LE(occupancy, 1);
    EXPECT_GT(*jvm_value(e, "heapd_jvm_uptime_seconds", pid), 0);
    // Its resident memory as ps(1) reads it, against the host's memory (no cgroup limit here).
    const double resident = *jvm_value(e, "heapd_jvm_resident_bytes", pid);
    const command_result ps = run_command({"ps", "-o", "rss=", "-p", std::to_string(pid)});
    EXPECT_NEAR(resident, std::stod(ps.out) * 1024, 16 << 20) << ps.out;
    EXPECT_GT(*jvm_value(e, "heapd_jvm_memory_limit_bytes", pid), resident);
    EXPECT_GT(*jvm_value(e, "heapd_jvm_memory_limit_ratio", pid), 0);
    EXPECT_GE(*jvm_value(e, "heapd_jvm_gc_seconds_total", pid), 0);
    const double share = *jvm_value(e, "heapd_jvm_gc_time_ratio", pid);
    EXPECT_GE(share, 0);
    EXPECT_LE(share, 1);
    EXPECT_GE(*e.value("heapd_jvms"), 1);
    EXPECT_EQ(e.value("heapd_dumps_total", {{"trigger", "request"}}), 0);
    EXPECT_EQ(e.value("heapd_analysis_duration_seconds_count", {{"kind", "dump"}}), 0);
    EXPECT_EQ(e.value("heapd_store_entries"), 0);
    EXPECT_EQ(e.value("heapd_build_info", {{"version", "0.1.0"}}), 1);

    auto dumped = heapctl(d, {"dump", std::to_string(pid), "--wait"});
    ASSERT_EQ(dumped.exit_code, 0) << dumped.err << d.log();
    e = metrics_of(d);
    EXPECT_EQ(e.value("heapd_dumps_total", {{"trigger", "request"}}), 1);
    EXPECT_EQ(e.value("heapd_dump_failures_total", {{"trigger", "request"}}), 0);
    EXPECT_EQ(e.value("heapd_analysis_duration_seconds_count", {{"kind", "dump"}}), 1);
    EXPECT_GT(*e.value("heapd_analysis_duration_seconds_sum", {{"kind", "dump"}}), 0);
    EXPECT_EQ(e.value("heapd_analysis_duration_seconds_bucket", {{"kind", "dump"}, {"le", "+Inf"}}), 1);
    EXPECT_EQ(e.value("heapd_store_entries"), 1);
    EXPECT_GT(*e.value("heapd_store_bytes"), 1000000);
    EXPECT_EQ(e.value("heapd_jobs", {{"state", "running"}}), 0);

    auto json = heapctl(d, {"metrics", "--json"});
    EXPECT_EQ(json.exit_code, 1) << json.err;
}

TEST(serve_metrics, a_dump_that_fails_counts_as_a_failure) {
    // The store on a 2 MiB tmpfs in a mount namespace of the daemon's own: the dump job starts and
    // fails for want of room.
    const std::string script =
        "for a; do [ \"$prev\" = --store ] && store=$a; prev=$a; done; "
        "mkdir -p \"$store\" && mount -t tmpfs -o size=2m,mode=0750 tmpfs \"$store\" && exec \"$@\"";
    shared_dir out;
    const std::string textfile = out.file("heapd.prom");
    serve_process d({"--metrics-file", textfile, "--metrics-interval", "1"},
                    {"unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"});
    ASSERT_TRUE(d.ready()) << d.log();
    demo_jvm jvm(java_main{"Sessions"}, {"-Xmx256m"}, {"20000"});
    ASSERT_TRUE(jvm.ready());

    auto failed = heapctl(d, {"dump", std::to_string(jvm.pid()), "--wait"});
    ASSERT_EQ(failed.exit_code, 6) << failed.out << failed.err;
    EXPECT_NE(failed.err.find("free space"), std::string::npos) << failed.err;
    auto e = metrics_of(d);
    EXPECT_EQ(e.value("heapd_dump_failures_total", {{"trigger", "request"}}), 1);
    EXPECT_EQ(e.value("heapd_dumps_total", {{"trigger", "request"}}), 0);
    EXPECT_EQ(e.value("heapd_analysis_duration_seconds_count", {{"kind", "dump"}}), 0);

    // The textfile says so too, at the next interval.
    std::optional<double> counted;
    for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
         std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(std::chrono::milliseconds(100))) {
        auto f = parse_prometheus_text(slurp(textfile));
        if (f && (counted = f->value("heapd_dump_failures_total", {{"trigger", "request"}})) == 1) break;
    }
    EXPECT_EQ(counted, 1) << slurp(textfile);
}

TEST(serve_metrics, the_textfile_is_replaced_whole_at_every_interval) {
    shared_dir out;
    const std::string textfile = out.file("heapd.prom");
    serve_process d({"--metrics-file", textfile, "--metrics-interval", "1"});
    ASSERT_TRUE(d.ready()) << d.log();
    demo_jvm jvm(java_main{"Sessions"}, {"-Xmx128m"}, {"1000"});
    ASSERT_TRUE(jvm.ready());

    // Read as fast as it comes: every read is a whole exposition, and the file is a new one (renamed
    // over the last) at each interval.
    std::set<ino_t> files;
    std::size_t reads = 0;
    bool saw_jvm = false;
    for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
         files.size() < 4 && std::chrono::steady_clock::now() < deadline;) {
        std::ifstream in(textfile, std::ios::binary);
        if (!in) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            continue;
        }
        struct stat st {};
        ASSERT_EQ(::stat(textfile.c_str(), &st), 0);
        std::ostringstream s;
        s << in.rdbuf();
        ++reads;
        auto e = parse_prometheus_text(s.str());
        ASSERT_TRUE(e) << "read " << reads << ": " << e.error() << "\n" << s.str();
        EXPECT_EQ(st.st_mode & 0777, 0644u);
        saw_jvm = saw_jvm || jvm_value(*e, "heapd_jvm_heap_used_bytes", jvm.pid()).has_value();
        files.insert(st.st_ino);
    }
    EXPECT_GE(files.size(), 4u) << "the textfile was not rewritten at its interval; " << reads << " reads\n" << d.log();
    EXPECT_TRUE(saw_jvm) << slurp(textfile);
    EXPECT_EQ(promtool_check(slurp(textfile)), "") << slurp(textfile);
    EXPECT_NE(d.log().find("metrics: writing " + textfile + " every 1 s"), std::string::npos) << d.log();

    // Stopped: the last whole file stays, no temporary file beside it.
    EXPECT_EQ(d.stop(), 0);
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(out.path())) names.push_back(entry.path().filename().string());
    EXPECT_EQ(names, std::vector<std::string>{"heapd.prom"});
}

TEST(serve_metrics, a_user_who_is_not_an_admin_sees_only_their_own_jvms) {
    temp_user other;
    ASSERT_TRUE(other.ok());
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    demo_jvm roots(java_main{"Sessions"}, {"-Xmx128m"}, {"1000"});
    isolated_jvm theirs(java_main{"Sessions"}, {"-Xmx128m"}, {"1000"}, isolation{&other, false});
    ASSERT_TRUE(roots.ready() && theirs.ready());

    auto seen = metrics_of(d, &other);
    EXPECT_TRUE(jvm_value(seen, "heapd_jvm_heap_used_bytes", theirs.pid()).has_value());
    EXPECT_FALSE(jvm_value(seen, "heapd_jvm_heap_used_bytes", roots.pid()).has_value());
    for (const auto& [name, f] : seen.families) {
        // Every family of one JVM's series; heapd_jvm_deaths_total counts the daemon's, by cause.
        if (!name.starts_with("heapd_jvm_") || name == "heapd_jvm_deaths_total") continue;
        for (const prom_sample& s : f.samples) EXPECT_EQ(s.labels.at("user"), other.name()) << name;
    }
    EXPECT_EQ(seen.value("heapd_jvms"), 1);

    auto all = metrics_of(d);
    EXPECT_TRUE(jvm_value(all, "heapd_jvm_heap_used_bytes", theirs.pid()).has_value());
    EXPECT_TRUE(jvm_value(all, "heapd_jvm_heap_used_bytes", roots.pid()).has_value());
    EXPECT_EQ(all.value("heapd_jvm_uptime_seconds", {{"pid", std::to_string(theirs.pid())}, {"user", other.name()}})
                  .has_value(),
              true);
}

}  // namespace
}  // namespace heapd::test
