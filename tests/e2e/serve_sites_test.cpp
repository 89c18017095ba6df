// heapctl sites through the daemon: a user samples their own JVM (the daemon, as root, loads heapd's
// agent into it), another user may not, and the table reaches heapctl as JSON and text.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/oom_scenario.h"
#include "support/serve_process.h"

namespace heapd {
namespace {

using test::armed_row;
using test::isolated_jvm;
using test::isolation;
using test::java_main;
using test::run_heapctl;
using test::serve_process;
using test::temp_user;

TEST(serve_sites, a_user_samples_their_own_jvm_and_nobody_else_may) {
    serve_process d;
    ASSERT_TRUE(d.ready());
    temp_user owner, other;
    ASSERT_TRUE(owner.ok() && other.ok());
    // The JVM's trigger file lives in a directory its owner may write (AllocSites deletes it).
    const std::string dir = d.dir() + "/jvm";
    std::filesystem::create_directory(dir);
    ASSERT_EQ(::chown(dir.c_str(), owner.uid(), owner.gid()), 0);
    const std::string trigger = dir + "/go";
    isolated_jvm jvm(java_main{"AllocSites"}, {"-Xmx512m"}, {trigger}, isolation{&owner, false});
    ASSERT_TRUE(jvm.ready());
    const std::string pid = std::to_string(jvm.pid());

    auto denied = run_heapctl(d, {"sites", pid, "--start"}, &other);
    EXPECT_EQ(denied.exit_code, 4) << denied.out << denied.err;
    EXPECT_NE(denied.err.find("belongs to another user"), std::string::npos) << denied.err;

    auto started = run_heapctl(d, {"sites", pid, "--start"}, &owner);
    ASSERT_EQ(started.exit_code, 0) << started.err;
    EXPECT_NE(started.out.find("sampling every 512 KiB, 16 frames"), std::string::npos) << started.out;
    auto status = run_heapctl(d, {"sites", pid, "--status"}, &owner);
    EXPECT_EQ(status.exit_code, 0) << status.err;
    EXPECT_NE(status.out.find("sampling every"), std::string::npos) << status.out;
    ASSERT_TRUE(test::leaky_grow(trigger));
    // Another user may neither look nor stop it.
    EXPECT_EQ(run_heapctl(d, {"sites", pid, "--stop"}, &other).exit_code, 4);

    // A dump taken while the agent samples says where its suspect's objects were allocated.
    auto dumped = run_heapctl(d, {"dump", pid, "--wait", "--json"}, &owner);
    ASSERT_EQ(dumped.exit_code, 0) << dumped.err;
    auto report = nlohmann::json::parse(dumped.out);
    ASSERT_TRUE(report.contains("allocation_profile")) << dumped.out.substr(0, 2000);
    const auto& suspect = report["leak_suspects"]["suspects"][0];
    ASSERT_TRUE(suspect.contains("allocated_at")) << suspect.dump(1);
    EXPECT_EQ(suspect["allocated_at"][0]["origin"].get<std::string>().rfind("AllocSites.keep(AllocSites.java:", 0), 0u)
        << suspect.dump(1);
    auto text = run_heapctl(d, {"report", pid}, &owner);
    EXPECT_NE(text.out.find("byte[] allocated at AllocSites.keep(AllocSites.java:"), std::string::npos) << text.out;

    auto stopped = run_heapctl(d, {"sites", pid, "--stop", "--by", "method", "--cutoff", "0", "--json"}, &owner);
    ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
    auto table = nlohmann::json::parse(stopped.out);
    ASSERT_FALSE(table["rows"].empty()) << stopped.out;
    EXPECT_EQ(table["rows"][0]["method"], "AllocSites.keep") << stopped.out;
    EXPECT_NEAR(table["rows"][0]["live_bytes"].get<double>() / (1024.0 * 1024.0), 200, 30);

    // The whole run in one command, as text; then nothing is left sampling.
    auto whole = run_heapctl(d, {"sites", pid, "--seconds", "1", "--by", "class"}, &owner);
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    EXPECT_NE(whole.out.find("Process " + pid + "\nAllocation sites: "), std::string::npos) << whole.out;
    EXPECT_NE(whole.out.find("By class, ranked by live bytes"), std::string::npos) << whole.out;
    auto after = run_heapctl(d, {"sites", pid, "--status"}, &owner);
    EXPECT_NE(after.out.find("not sampling"), std::string::npos) << after.out;
    auto show = run_heapctl(d, {"sites", pid, "--show"}, &owner);
    EXPECT_EQ(show.exit_code, 6);
    EXPECT_NE(show.err.find("the agent: not sampling"), std::string::npos) << show.err;
}

}  // namespace
}  // namespace heapd

namespace heapd {
namespace {

// The OOM demo with the agent sampling from the start: the JVM fills a static map until its error,
// its hook hands the dump to the daemon, the agent writes its table once the hook has run, and the
// JVM exits; the report of the OOM names the line that filled the map.
TEST(serve_sites, the_report_of_an_oom_names_the_line_that_filled_the_map) {
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    test::scratch_dir dir;
    const std::string agent = std::string(HEAPD_BINARY_DIR) + "/daemon/libheapd_agent.so";
    test::demo_jvm jvm(
        java_main{"OomExit"},
        {"-Xmx64m", test::hook_flag(d, dir.path(), dir.file("unused-spool")), "-agentpath:" + agent + "=start"},
        {dir.file("go")}, dir.file("jvm.out"));
    ASSERT_TRUE(jvm.ready());
    // The daemon arms the JVM (its dump path) before it may leak.
    ASSERT_EQ(armed_row(d, jvm.pid()).value("oom_arming", nlohmann::json::object()).value("state", ""), "armed")
        << d.log();
    std::ofstream(dir.file("go")) << "go\n";
    ASSERT_TRUE(test::ended(jvm.pid()));
    auto job = test::finished_dump_job(d, jvm.pid());
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    auto report = run_heapctl(d, {"report", std::to_string(jvm.pid())});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    // What accumulates in the map's table are its nodes, put there by line 25.
    EXPECT_NE(report.out.find("java.util.HashMap$Node allocated at OomExit.main(OomExit.java:25)"), std::string::npos)
        << report.out;
    // The agent's file in /tmp went with it.
    for (const auto& e : std::filesystem::directory_iterator("/tmp"))
        EXPECT_FALSE(e.path().filename().string().starts_with("heapd-agent-oom-" + std::to_string(jvm.pid()) + "-"))
            << e.path();
}

}  // namespace
}  // namespace heapd

namespace heapd {
namespace {

// heapctl cpu through the daemon: the owner's spinning JVM's samples are its spinning method's;
// another user may not take them.
TEST(serve_sites, heapctl_cpu_samples_a_users_jvm) {
    serve_process d;
    ASSERT_TRUE(d.ready());
    temp_user owner, other;
    ASSERT_TRUE(owner.ok() && other.ok());
    isolated_jvm jvm(java_main{"CpuSpin"}, {"-Xmx64m"}, {}, isolation{&owner, false});
    ASSERT_TRUE(jvm.ready());
    const std::string pid = std::to_string(jvm.pid());
    EXPECT_EQ(run_heapctl(d, {"cpu", pid, "--seconds", "1"}, &other).exit_code, 4);
    auto r = run_heapctl(d, {"cpu", pid, "--seconds", "1", "--json"}, &owner);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    ASSERT_FALSE(j["rows"].empty()) << r.out;
    EXPECT_EQ(j["rows"][0]["frames"][0].get<std::string>().rfind("CpuSpin.spin(CpuSpin.java:", 0), 0u) << r.out;
    EXPECT_GT(j["rows"][0]["self"].get<double>(), 0.9);
    auto text = run_heapctl(d, {"cpu", pid, "--seconds", "0.5"}, &owner);
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("CpuSpin.spin(CpuSpin.java:"), std::string::npos) << text.out;
    auto stop = run_heapctl(d, {"cpu", pid, "--stop"}, &owner);
    EXPECT_EQ(stop.exit_code, 6);
    EXPECT_NE(stop.err.find("not sampling CPU"), std::string::npos) << stop.err;
}

}  // namespace
}  // namespace heapd
