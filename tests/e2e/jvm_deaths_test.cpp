// Every death of a JVM heapd watches is recorded and explained: a JVM leaking direct buffers in a
// real memory cgroup is killed by the kernel's OOM killer and heapd says so (signal, the cgroup's
// OOM kill count, its memory as last seen); a JVM killed by someone else is not called an OOM kill;
// a JVM stopped cleanly is counted but not kept. Only the owner (and root) sees the record.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"
#include "support/test_cgroup.h"

namespace heapd {
namespace {

using nlohmann::json;
using test::isolated_jvm;
using test::isolation;
using test::java_main;
using test::run_heapctl;
using test::serve_process;
using test::shared_dir;
using test::temp_user;

constexpr long long mib = 1 << 20;

// The death record of pid among `heapctl deaths --json`'s, null when there is none.
json listed_death(const serve_process& d, pid_t pid, const temp_user* user) {
    const json list = json::parse(run_heapctl(d, {"deaths", "--json"}, user).out, nullptr, false);
    if (list.is_array())
        for (const json& item : list)
            if (item["death"]["pid"] == pid) return item;
    return {};
}

// listed_death, waiting up to 90 s for it.
json death_of(const serve_process& d, pid_t pid, const temp_user* user) {
    for (int i = 0; i < 450; ++i) {
        if (json item = listed_death(d, pid, user); !item.is_null()) return item;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return {};
}

// The value of one series in `heapctl metrics` (-1 when absent).
double metric(const serve_process& d, const std::string& series) {
    const std::string text = run_heapctl(d, {"metrics"}).out;
    const std::size_t at = text.find("\n" + series + " ");
    return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 2));
}

// Whether the daemon's log has the line, waiting up to 30 s for it.
bool logged(const serve_process& d, const std::string& text) {
    for (int i = 0; i < 150; ++i) {
        if (d.log().find(text) != std::string::npos) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
}

// Waits until `heapctl jvms` (as user) lists pid, then two of the daemon's polls more: by then its
// death watcher holds a pidfd for it and has glanced at its memory.
bool watched(const serve_process& d, pid_t pid, const temp_user* user) {
    for (int i = 0; i < 150; ++i) {
        const json rows = json::parse(run_heapctl(d, {"jvms", "--json"}, user).out, nullptr, false);
        if (rows.is_array())
            for (const json& row : rows)
                if (row["pid"] == pid) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
                    return true;
                }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
}

TEST(jvm_deaths, an_oom_kill_at_the_cgroups_limit_is_recorded_and_explained) {
    test::test_cgroup leak_cgroup("memory"), steady_cgroup("memory");
    if (!leak_cgroup.ok() || !steady_cgroup.ok()) GTEST_SKIP() << "no writable cgroup v1 memory hierarchy here";
    ASSERT_TRUE(leak_cgroup.set("memory.limit_in_bytes", std::to_string(200 * mib)));
    shared_dir dir;
    const std::string config = dir.file("heapd.toml"), trigger = dir.file("grow");
    std::ofstream(config) << "[daemon]\npoll_interval = \"500ms\"\n";
    serve_process d({"--config", config});
    ASSERT_TRUE(d.ready()) << d.log();
    temp_user owner, other;
    ASSERT_TRUE(owner.ok() && other.ok());

    // The leak: 20 MiB of direct buffers, then 1 MiB more every 5 ms once the trigger exists.
    isolated_jvm leak(java_main{"OffHeap"}, {"-Xmx64m", "-XX:MaxDirectMemorySize=2g"}, {"20", "5", trigger},
                      isolation{&owner, false});
    ASSERT_TRUE(leak.ready());
    ASSERT_TRUE(leak_cgroup.add(leak.pid()));
    // Another, steady, in a cgroup with no limit: killed by the test with SIGKILL.
    isolated_jvm victim(java_main{"OffHeap"}, {"-Xmx64m"}, {"10", "5"}, isolation{&owner, false});
    ASSERT_TRUE(victim.ready());
    ASSERT_TRUE(steady_cgroup.add(victim.pid()));
    // A third, stopped as a service manager stops one (SIGTERM: it runs its shutdown hooks).
    isolated_jvm stopped(java_main{"OffHeap"}, {"-Xmx64m"}, {"1", "1"}, isolation{&owner, false});
    ASSERT_TRUE(stopped.ready());
    ASSERT_TRUE(watched(d, leak.pid(), &owner) && watched(d, victim.pid(), &owner) &&
                watched(d, stopped.pid(), &owner));

    std::ofstream(trigger) << "grow\n";
    const json oom = death_of(d, leak.pid(), &owner);
    ASSERT_TRUE(oom.is_object()) << d.log();
    const json& r = oom["death"];
    EXPECT_EQ(r["cause"], "oom_kill") << r.dump(2);
    EXPECT_EQ(r["status"]["signal"], SIGKILL) << r.dump(2);
    EXPECT_EQ(r["evidence"], "SIGKILL; the OOM kill count of its memory cgroup (cgroup v1 " + leak_cgroup.path() +
                                 ") rose from 0 to 1");
    EXPECT_EQ(r["uid"], owner.uid());
    EXPECT_EQ(r["main_class"], "OffHeap");
    EXPECT_EQ(r["limit"]["bytes"], 200 * mib);
    EXPECT_GT(r["last"]["resident"].get<long long>(), 20 * mib);
    // Its breakdown from /proc as last read: the direct buffers are native memory.
    ASSERT_TRUE(r.contains("breakdown")) << r.dump(2);
    long long other_native = 0;
    for (const json& p : r["breakdown"]["parts"])
        if (p["name"] == "other_native") other_native = p["resident"];
    EXPECT_GE(other_native, 20 * mib) << r["breakdown"].dump(2);
    const std::string id = oom["id"];
    EXPECT_TRUE(id.ends_with("-death-" + std::to_string(leak.pid()))) << id;
    // Kept apart from the dumps: no entry of the store, a private file of its own.
    struct stat st {};
    ASSERT_EQ(::stat((d.store() + "/deaths/" + id + ".json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u);

    auto text = run_heapctl(d, {"deaths"}, &owner);
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("pid " + std::to_string(leak.pid()) + " OffHeap"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("killed by the kernel's OOM killer; last seen "), std::string::npos) << text.out;
    EXPECT_NE(r["headline"].get<std::string>().find("MiB limit (cgroup v1 " + leak_cgroup.path() + ")"),
              std::string::npos)
        << r["headline"];
    EXPECT_NE(text.out.find("last breakdown ("), std::string::npos) << text.out;
    EXPECT_NE(
        d.log().find("JVM " + std::to_string(leak.pid()) + " (OffHeap) killed by the kernel's OOM killer; last seen "),
        std::string::npos)
        << d.log();
    // Another user sees none of it; the record is no dump.
    auto others = run_heapctl(d, {"deaths"}, &other);
    EXPECT_EQ(others.out, "no deaths of JVMs you may see were recorded\n") << others.out;
    auto dumps = run_heapctl(d, {"dumps", "--json"}, &owner);
    EXPECT_EQ(dumps.out.find("\"death\""), std::string::npos) << dumps.out;

    // A SIGKILL from someone else, with no OOM kill counted: killed, not OOM-killed.
    ASSERT_EQ(::kill(victim.pid(), SIGKILL), 0);
    const json killed = death_of(d, victim.pid(), &owner);
    ASSERT_TRUE(killed.is_object()) << d.log();
    EXPECT_EQ(killed["death"]["cause"], "killed") << killed.dump(2);
    EXPECT_EQ(killed["death"]["main_class"], "OffHeap");
    EXPECT_EQ(killed["death"]["evidence"],
              "SIGKILL, not from the OOM killer (its memory cgroup's OOM kill count stayed at 0)");

    // A clean stop is logged and counted, not kept. (The daemon watches every JVM of the host: other
    // tests' JVMs may die meanwhile, so counts are at least this test's.)
    ASSERT_EQ(::kill(stopped.pid(), SIGTERM), 0);
    EXPECT_TRUE(logged(d, "JVM " + std::to_string(stopped.pid()) + " (OffHeap) stopped (exit code 143); last seen "))
        << d.log();
    EXPECT_NE(d.log().find("exit code 143: the JVM stopped on SIGTERM (its shutdown hooks ran)\n"), std::string::npos);
    EXPECT_TRUE(listed_death(d, stopped.pid(), &owner).is_null());
    EXPECT_GE(metric(d, "heapd_jvm_deaths_total{cause=\"stopped\"}"), 1);
    EXPECT_GE(metric(d, "heapd_jvm_deaths_total{cause=\"oom_kill\"}"), 1);
    EXPECT_GE(metric(d, "heapd_jvm_deaths_total{cause=\"killed\"}"), 1);
}

}  // namespace
}  // namespace heapd
