// `heapd sites` against real JVMs: tests/java/AllocSites.java allocates from known methods known
// amounts (200 live arrays of 1 MiB from keep(), 2 GiB of 1 KiB arrays that die at once from
// churn(), 25 dropped arrays of 4 MiB from big()); the agent's estimates must find them. Then what
// goes wrong: not sampling, sampling twice, the capability held by another agent (a second copy of
// the library), the JVM exiting while sampled, and many start/stop cycles.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "attach/agent_control.h"
#include "support/isolated_jvm.h"
#include "support/jvm_process.h"

namespace heapd {
namespace {

using test::demo_jvm;
using test::java_main;
using test::run_command;

constexpr double mib = 1024.0 * 1024.0;

std::string agent_library() { return std::string(HEAPD_BINARY_DIR) + "/daemon/libheapd_agent.so"; }

test::command_result sites(pid_t pid, std::vector<std::string> args) {
    std::vector<std::string> argv = {test::heapd_binary(), "sites", std::to_string(pid)};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv);
}

// The row of a `--by method --json` table whose method is `method`, or null.
const nlohmann::json* method_row(const nlohmann::json& table, const std::string& method) {
    for (const auto& row : table["rows"])
        if (row["method"] == method) return &row;
    return nullptr;
}

TEST(sites_command, finds_the_known_allocation_sites_of_a_real_jvm) {
    test::scratch_dir dir;
    const std::string trigger = dir.file("go");
    demo_jvm jvm(java_main{"AllocSites"}, {"-Xmx1g"}, {trigger});
    ASSERT_TRUE(jvm.ready());
    auto started = sites(jvm.pid(), {"--start"});
    ASSERT_EQ(started.exit_code, 0) << started.err;
    ASSERT_TRUE(test::leaky_grow(trigger));
    auto stopped = sites(jvm.pid(), {"--stop", "--by", "method", "--cutoff", "0", "--json"});
    ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
    auto table = nlohmann::json::parse(stopped.out);
    EXPECT_EQ(table["dropped"]["no_slot"], 0);
    EXPECT_EQ(table["collected_first"], true);

    // The keeping method is the top live site, its live bytes within 15% of the 200 MiB it holds.
    ASSERT_FALSE(table["rows"].empty());
    EXPECT_EQ(table["rows"][0]["method"], "AllocSites.keep") << table.dump(1);
    const nlohmann::json* keep = method_row(table, "AllocSites.keep");
    ASSERT_NE(keep, nullptr);
    EXPECT_NEAR((*keep)["live_bytes"].get<double>() / mib, 200, 30) << keep->dump();
    EXPECT_NEAR((*keep)["live_objects"].get<double>(), 200, 30);

    // The churning method allocated 2 GiB, within 15%, and under 1% of it is alive.
    const nlohmann::json* churn = method_row(table, "AllocSites.churn");
    ASSERT_NE(churn, nullptr);
    const double churned = (*churn)["bytes"].get<double>();
    EXPECT_NEAR(churned / mib, 2048, 2048 * 0.15) << churn->dump();
    EXPECT_LT((*churn)["live_bytes"].get<double>(), churned * 0.01) << churn->dump();

    // big() allocated 100 MiB in 4 MiB arrays and dropped them.
    const nlohmann::json* big = method_row(table, "AllocSites.big");
    ASSERT_NE(big, nullptr);
    EXPECT_NEAR((*big)["bytes"].get<double>() / mib, 100, 15) << big->dump();
    EXPECT_LT((*big)["live_bytes"].get<double>(), 8 * mib);

    // Sampling stopped: nothing more to show.
    auto again = sites(jvm.pid(), {"--show"});
    EXPECT_EQ(again.exit_code, 3);
    EXPECT_NE(again.err.find("not sampling"), std::string::npos) << again.err;
}

TEST(sites_command, prints_the_sites_table_with_stacks) {
    test::scratch_dir dir;
    const std::string trigger = dir.file("go");
    demo_jvm jvm(java_main{"AllocSites"}, {"-Xmx1g"}, {trigger});
    ASSERT_TRUE(jvm.ready());
    std::thread grow([&] { std::this_thread::sleep_for(std::chrono::milliseconds(500)), test::leaky_grow(trigger); });
    auto table = sites(jvm.pid(), {"--seconds", "6", "--depth", "2"});
    grow.join();
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_NE(table.out.find("ranked by live bytes"), std::string::npos) << table.out;
    // Rank 1 is the kept byte[] with its two frames under it.
    auto rank1 = table.out.find("   1 ");
    ASSERT_NE(rank1, std::string::npos) << table.out;
    auto keep = table.out.find("byte[]\n          at AllocSites.keep(AllocSites.java:", rank1);
    EXPECT_NE(keep, std::string::npos) << table.out;
    EXPECT_NE(table.out.find("          at AllocSites.main(AllocSites.java:", keep), std::string::npos) << table.out;
}

TEST(sites_command, refuses_what_cannot_be_done_and_says_why) {
    test::scratch_dir dir;
    demo_jvm jvm(java_main{"AllocSites"}, {"-Xmx256m"}, {dir.file("never")});
    ASSERT_TRUE(jvm.ready());
    auto show = sites(jvm.pid(), {"--show"});
    EXPECT_EQ(show.exit_code, 3);
    EXPECT_NE(show.err.find("not sampling"), std::string::npos) << show.err;

    ASSERT_EQ(sites(jvm.pid(), {"--start"}).exit_code, 0);
    auto twice = sites(jvm.pid(), {"--start"});
    EXPECT_EQ(twice.exit_code, 3);
    EXPECT_NE(twice.err.find("already sampling"), std::string::npos) << twice.err;
    auto status = sites(jvm.pid(), {"--status"});
    EXPECT_EQ(status.exit_code, 0);
    EXPECT_NE(status.out.find("sampling for"), std::string::npos) << status.out;

    // A second copy of the agent (another path: another library to the JVM) cannot sample while the
    // first holds the capability, which is one environment's at a time.
    const std::string copy = dir.file("libheapd_agent_copy.so");
    std::filesystem::copy_file(agent_library(), copy);
    ::chmod(dir.path().c_str(), 0755);
    auto second = sites(jvm.pid(), {"--start", "--agent", copy});
    EXPECT_EQ(second.exit_code, 3);
    EXPECT_NE(second.err.find("another JVMTI agent holds allocation sampling"), std::string::npos) << second.err;
    ASSERT_EQ(sites(jvm.pid(), {"--stop"}).exit_code, 0);
    // Once the first let go, the second may.
    EXPECT_EQ(sites(jvm.pid(), {"--start", "--agent", copy}).exit_code, 0);
    EXPECT_EQ(sites(jvm.pid(), {"--stop", "--agent", copy}).exit_code, 0);

    // An agent library others could have written is never given to a JVM: the file, a directory
    // above it, or the file a link leads to.
    const std::string open_dir = dir.file("open");
    std::filesystem::create_directory(open_dir);
    std::filesystem::copy_file(agent_library(), open_dir + "/libheapd_agent.so");
    ::chmod(open_dir.c_str(), 0777);
    auto in_open_dir = sites(jvm.pid(), {"--start", "--agent", open_dir + "/libheapd_agent.so"});
    EXPECT_EQ(in_open_dir.exit_code, 2);
    EXPECT_NE(in_open_dir.err.find("the directory " + open_dir + " of the agent library is writable by others"),
              std::string::npos)
        << in_open_dir.err;
    std::filesystem::create_symlink(open_dir + "/libheapd_agent.so", dir.file("link.so"));
    auto through_link = sites(jvm.pid(), {"--start", "--agent", dir.file("link.so")});
    EXPECT_EQ(through_link.exit_code, 2);
    EXPECT_NE(through_link.err.find("is writable by others"), std::string::npos) << through_link.err;
    ::chmod(copy.c_str(), 0666);
    auto unsafe = sites(jvm.pid(), {"--start", "--agent", copy});
    EXPECT_EQ(unsafe.exit_code, 2);
    EXPECT_NE(unsafe.err.find("writable by others"), std::string::npos) << unsafe.err;
}

TEST(sites_command, a_jvm_without_attach_is_refused_with_the_reason) {
    test::scratch_dir dir;
    demo_jvm jvm(java_main{"AllocSites"}, {"-Xmx256m", "-XX:+DisableAttachMechanism"}, {dir.file("never")});
    ASSERT_TRUE(jvm.ready());
    auto start = sites(jvm.pid(), {"--start"});
    EXPECT_EQ(start.exit_code, 4);
    EXPECT_NE(start.err.find("attach_disabled"), std::string::npos) << start.err;
}

TEST(sites_command, a_jvm_that_exits_while_sampled_exits_as_it_would) {
    test::scratch_dir dir;
    auto p = test::start_until_ready({"java", "-Xmx256m", "-XX:ErrorFile=" + dir.file("hs_err.log"), "-cp",
                                      test::test_classes_dir(), "AllocSites", dir.file("never"), "forever"},
                                     dir.path());
    ASSERT_TRUE(p.ready);
    EXPECT_EQ(sites(p.pid, {"--start", "--interval", "16384"}).exit_code, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ::kill(p.pid, SIGTERM);
    int status = 0;
    ASSERT_EQ(::waitpid(p.pid, &status, 0), p.pid);
    // Shutdown by SIGTERM: exit status 143, no crash report.
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 143) << status;
    EXPECT_FALSE(std::filesystem::exists(dir.file("hs_err.log")));
}

// Resident memory of a process in KiB (VmRSS).
long rss_kib(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    return -1;
}

TEST(sites_command, a_hundred_start_stop_cycles_leave_nothing_behind) {
    test::scratch_dir dir;
    demo_jvm jvm(java_main{"AllocSites"}, {"-Xmx256m", "-Xms256m"}, {dir.file("never")});
    ASSERT_TRUE(jvm.ready());
    attach::agent_target agent{agent_library()};
    auto cycle = [&] {
        auto start = attach::agent_command(jvm.pid(), agent, "start,interval=1024", 1);
        ASSERT_TRUE(start.has_value()) << start.error().describe();
        EXPECT_NE(start->find("\"error\":\"\""), std::string::npos) << *start;
        auto stop = attach::agent_command(jvm.pid(), agent, "stop", 1);
        ASSERT_TRUE(stop.has_value()) << stop.error().describe();
        EXPECT_NE(stop->find("\"error\":\"\""), std::string::npos) << *stop;
    };
    // A heapd of another protocol version is told so by the agent, which stays as it is.
    auto other = attach::agent_command(jvm.pid(), agent, "status", 2);
    ASSERT_TRUE(other.has_value()) << other.error().describe();
    EXPECT_NE(other->find("heapd speaks agent protocol 2, this agent"), std::string::npos) << *other;
    EXPECT_NE(other->find("\"protocol\":1"), std::string::npos) << *other;
    for (int i = 0; i < 10; ++i) cycle();
    const long after_ten = rss_kib(jvm.pid());
    for (int i = 0; i < 90; ++i) cycle();
    const long after_hundred = rss_kib(jvm.pid());
    // Each cycle allocates the ring (1.2 MiB) and tables afresh: 90 leaked cycles would be 100+ MiB.
    EXPECT_LT(after_hundred - after_ten, 16 * 1024) << after_ten << " KiB after 10, " << after_hundred << " after 100";
    // No file of the agent's is left in /tmp.
    for (const auto& e : std::filesystem::directory_iterator("/tmp"))
        EXPECT_EQ(e.path().filename().string().find("heapd-agent-" + std::to_string(jvm.pid()) + "-"),
                  std::string::npos);
}

}  // namespace
}  // namespace heapd

namespace heapd {
namespace {

// The join: a dump taken while the agent samples, analyzed with the agent's saved answer, says where
// the leak suspect's objects were allocated, down to the line.
TEST(sites_command, a_dump_report_says_where_its_suspects_objects_were_allocated) {
    test::scratch_dir dir;
    const std::string trigger = dir.file("go");
    demo_jvm jvm(java_main{"AllocSites"}, {"-Xmx1g"}, {trigger});
    ASSERT_TRUE(jvm.ready());
    ASSERT_EQ(sites(jvm.pid(), {"--start"}).exit_code, 0);
    ASSERT_TRUE(test::leaky_grow(trigger));
    const std::string profile = dir.file("sites.json"), dump = dir.file("heap.hprof");
    auto show = sites(jvm.pid(), {"--show", "--save", profile});
    ASSERT_EQ(show.exit_code, 0) << show.err;
    auto dumped = run_command({test::heapd_binary(), "attach", std::to_string(jvm.pid()), "dumpheap", dump});
    ASSERT_EQ(dumped.exit_code, 0) << dumped.err;

    auto analyzed = run_command({test::heapd_binary(), "analyze", dump, "--no-index", "--json", "--sites", profile});
    ASSERT_EQ(analyzed.exit_code, 0) << analyzed.err;
    auto report = nlohmann::json::parse(analyzed.out);
    ASSERT_TRUE(report.contains("allocation_profile"));
    EXPECT_GT(report["allocation_profile"]["samples"].get<std::uint64_t>(), 100u);
    const auto& suspects = report["leak_suspects"]["suspects"];
    ASSERT_FALSE(suspects.empty());
    ASSERT_TRUE(suspects[0].contains("allocated_at")) << suspects[0].dump(1);
    const auto& site = suspects[0]["allocated_at"][0];
    EXPECT_EQ(site["class"], "byte[]");
    EXPECT_EQ(site["origin"].get<std::string>().rfind("AllocSites.keep(AllocSites.java:", 0), 0u) << site.dump();
    EXPECT_GT(site["share"].get<double>(), 0.9);
    EXPECT_NEAR(site["live_bytes"].get<double>() / mib, 200, 30);

    // The agent's live byte[] agree with the dump's histogram: every byte[] but the JDK's few
    // (allocated before sampling started, 1-2 MiB) was allocated while it sampled. 173 samples of
    // the 1 MiB arrays on average: one standard deviation is about 3%; allowed: 15%.
    double dumped_arrays = 0;
    for (const auto& row : report["histogram"])
        if (row["class"] == "byte[]") dumped_arrays = row["shallow_bytes"].get<double>();
    auto by_class = nlohmann::json::parse(
        run_command({test::heapd_binary(), "sites", std::to_string(jvm.pid()), "--show", "--by", "class", "--json"})
            .out);
    double sampled_arrays = 0;
    for (const auto& row : by_class["rows"])
        if (row["class"] == "byte[]") sampled_arrays = row["live_bytes"].get<double>();
    EXPECT_NEAR(sampled_arrays / dumped_arrays, 1.0, 0.15)
        << sampled_arrays << " sampled, " << dumped_arrays << " dumped";

    auto text = run_command({test::heapd_binary(), "analyze", dump, "--no-index", "--sites", profile});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("byte[] allocated at AllocSites.keep(AllocSites.java:"), std::string::npos) << text.out;
    // Without the profile, no such line.
    auto plain = run_command({test::heapd_binary(), "analyze", dump, "--no-index"});
    EXPECT_EQ(plain.out.find("allocated at"), std::string::npos);
}

}  // namespace
}  // namespace heapd

namespace heapd {
namespace {

// A JVM in a container (own mount and pid namespaces, a private /tmp) cannot see heapd's library:
// a copy is placed in its /tmp, loaded, and reached again by later commands.
TEST(sites_command, samples_a_jvm_in_a_container) {
    test::scratch_dir dir;
    const std::string trigger = dir.file("go");
    test::isolated_jvm jvm(java_main{"AllocSites"}, {"-Xmx512m"}, {trigger}, test::isolation{nullptr, true});
    ASSERT_TRUE(jvm.ready());
    auto started = sites(jvm.pid(), {"--start"});
    ASSERT_EQ(started.exit_code, 0) << started.err;
    ASSERT_TRUE(test::leaky_grow(trigger));
    auto shown = sites(jvm.pid(), {"--show", "--by", "method", "--json"});
    ASSERT_EQ(shown.exit_code, 0) << shown.err;
    auto table = nlohmann::json::parse(shown.out);
    ASSERT_FALSE(table["rows"].empty()) << shown.out;
    EXPECT_EQ(table["rows"][0]["method"], "AllocSites.keep");
    ASSERT_EQ(sites(jvm.pid(), {"--stop"}).exit_code, 0);
    // One copy only: the later commands reached the agent the first one loaded.
    std::string maps;
    {
        std::ifstream in("/proc/" + std::to_string(jvm.pid()) + "/maps");
        maps.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::set<std::string> copies;
    for (std::size_t at = maps.find("heapd-agent-"); at != std::string::npos; at = maps.find("heapd-agent-", at + 1))
        copies.insert(maps.substr(at, maps.find('\n', at) - at));
    EXPECT_EQ(copies.size(), 1u) << maps;
}

}  // namespace
}  // namespace heapd

namespace heapd {
namespace {

// A newer JDK, when the machine has one (HEAPD_TEST_JDK21, else the first JDK 21 or later found in
// /usr/lib/jvm): sampled the same way, and with -XX:-EnableDynamicAgentLoading refused with the JVM's
// reason.
std::string newer_java() {
    if (const char* dir = std::getenv("HEAPD_TEST_JDK21")) return std::string(dir) + "/bin/java";
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/usr/lib/jvm", ec)) {
        const std::string release = e.path().string() + "/release";
        std::ifstream in(release);
        std::string line;
        while (std::getline(in, line))
            if (line.starts_with("JAVA_VERSION=\"")) {
                const int major = std::atoi(line.c_str() + 14);
                if (major >= 21 && std::filesystem::exists(e.path() / "bin/java"))
                    return (e.path() / "bin/java").string();
            }
    }
    return {};
}

TEST(sites_command, a_newer_jdk_is_sampled_and_one_without_dynamic_agents_says_so) {
    const std::string java = newer_java();
    if (java.empty()) GTEST_SKIP() << "no JDK 21 or later in /usr/lib/jvm (set HEAPD_TEST_JDK21 to one)";
    test::scratch_dir dir;
    const std::string trigger = dir.file("go");
    auto p = test::start_until_ready({java, "-Xmx512m", "-cp", test::test_classes_dir(), "AllocSites", trigger});
    ASSERT_TRUE(p.ready) << java;
    ASSERT_EQ(sites(p.pid, {"--start"}).exit_code, 0);
    ASSERT_TRUE(test::leaky_grow(trigger));
    auto stopped = sites(p.pid, {"--stop", "--by", "method", "--json"});
    ::kill(p.pid, SIGKILL);
    ::waitpid(p.pid, nullptr, 0);
    ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
    auto table = nlohmann::json::parse(stopped.out);
    ASSERT_FALSE(table["rows"].empty());
    EXPECT_EQ(table["rows"][0]["method"], "AllocSites.keep");
    EXPECT_NEAR(table["rows"][0]["live_bytes"].get<double>() / mib, 200, 30);

    auto locked = test::start_until_ready(
        {java, "-XX:-EnableDynamicAgentLoading", "-cp", test::test_classes_dir(), "AllocSites", dir.file("never")});
    ASSERT_TRUE(locked.ready);
    auto refused = sites(locked.pid, {"--start"});
    ::kill(locked.pid, SIGKILL);
    ::waitpid(locked.pid, nullptr, 0);
    EXPECT_EQ(refused.exit_code, 3);
    EXPECT_NE(refused.err.find("Dynamic agent loading is not enabled"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace heapd

namespace heapd {
namespace {

// heapd cpu: one thread spins in CpuSpin.spin(), the others sleep or wait: the samples are spin()'s.
TEST(cpu_command, samples_the_stacks_of_threads_running_java_code) {
    demo_jvm jvm(java_main{"CpuSpin"}, {"-Xmx64m"}, {});
    ASSERT_TRUE(jvm.ready());
    auto r = run_command({test::heapd_binary(), "cpu", std::to_string(jvm.pid()), "--seconds", "2", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    // 200 ticks at 10 ms in 2 s (fewer when the machine is busy), one sample each: only the spinner runs.
    EXPECT_GE(j["ticks"].get<std::uint64_t>(), 50u);
    EXPECT_LE(j["samples"].get<std::uint64_t>(), j["ticks"].get<std::uint64_t>() + 5);
    ASSERT_FALSE(j["rows"].empty()) << r.out;
    const auto& top = j["rows"][0];
    EXPECT_EQ(top["frames"][0].get<std::string>().rfind("CpuSpin.spin(CpuSpin.java:", 0), 0u) << r.out;
    EXPECT_GT(top["self"].get<double>(), 0.9) << r.out;
    // Not sampling any more; --stop says so.
    auto again = run_command({test::heapd_binary(), "cpu", std::to_string(jvm.pid()), "--stop"});
    EXPECT_EQ(again.exit_code, 3);
    EXPECT_NE(again.err.find("not sampling CPU"), std::string::npos) << again.err;
    // Text: the spinning line ranked first.
    auto text = run_command({test::heapd_binary(), "cpu", std::to_string(jvm.pid()), "--seconds", "0.5"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("Safepoint-biased"), std::string::npos);
    EXPECT_NE(text.out.find("   1 "), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("CpuSpin.spin(CpuSpin.java:"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace heapd
