// Installing heapd is all a host needs: JVMs started without any heapd flag (no hook, no agent) on
// the host and in real containers (podman with runc, removed the moment the JVM exits, as a
// restarting pod's are) are armed by the daemon, and the dump each writes at its OutOfMemoryError is
// collected by the daemon itself (daemon/oom/dump_collector.h), kept and reported, naming the static
// field that holds the memory. The daemon runs with its defaults, arming every JVM, except that it
// is told which JVMs are this test's ([[oom.select]]): a test's daemon arms only its own JVMs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "formats/wire/protocol.h"
#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/oom_scenario.h"
#include "support/podman_jvm.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using wire::json;

void touch(const std::string& path) { std::ofstream(path) << "go\n"; }

// A daemon with its defaults (every JVM armed), told that this test's JVMs are the ones selected
// (TOML keys of [[oom.select]]: a user, a container's name).
struct zero_touch_daemon {
    zero_touch_daemon(const shared_dir& dir, const std::string& selector) {
        std::ofstream(dir.file("heapd.toml")) << "[daemon]\npoll_interval = \"500ms\"\n"
                                              << "[oom]\npoll_interval = \"500ms\"\n"
                                              << "[[oom.select]]\n"
                                              << selector << "\n";
        d.emplace(std::vector<std::string>{"--spool", "", "--config", dir.file("heapd.toml"), "--oom-arm", "all"});
    }
    std::optional<serve_process> d;
};

// The JVM's row once armed (state: heapd's path, or own_path for the JVM's own HeapDumpPath), with
// the daemon collecting its dump (no hook).
void expect_armed_for_collection(const serve_process& d, pid_t pid, const temp_user* as = nullptr,
                                 const std::string& state = "armed") {
    json row = armed_row(d, pid, as);
    const json arming = row.value("oom_arming", json::object());
    EXPECT_EQ(arming.value("state", ""), state) << row << d.log();
    EXPECT_TRUE(arming.value("collected", false)) << row;
}

TEST(zero_touch, a_host_jvm_without_any_heapd_flag_has_its_java_heap_oom_reported) {
    temp_user user;
    ASSERT_TRUE(user.ok());
    shared_dir dir;
    zero_touch_daemon z(dir, "user = \"" + user.name() + "\"");
    serve_process& d = *z.d;
    ASSERT_TRUE(d.ready()) << d.log();
    isolated_jvm jvm(java_main{"OomExit"}, {"-Xmx64m"}, {dir.file("go")}, isolation{&user, false});
    ASSERT_TRUE(jvm.ready());
    expect_armed_for_collection(d, jvm.pid(), &user);
    touch(dir.file("go"));
    ASSERT_TRUE(ended(jvm.pid()));
    json job = finished_dump_job(d, jvm.pid());
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    // The report is the JVM user's, as a hook's would be.
    expect_leak_report(d, jvm.pid(), "OomExit", &user);
    // heapd's file in the JVM's /tmp went once the dump was kept.
    for (const auto& e : std::filesystem::directory_iterator("/tmp"))
        EXPECT_FALSE(e.path().filename().string().starts_with("heapd-oom-" + std::to_string(jvm.pid()) + "-"))
            << e.path();
}

// A container whose JVM runs out of heap and exits, removed at once: the dump was collected anyway.
void run_container(const std::string& name, const std::vector<std::string>& flags, const std::string& dump_at,
                   const std::string& state) {
    if (!podman_jvm::available()) GTEST_SKIP() << "podman and runc are not installed";
    shared_dir dir;
    container_spec spec;
    spec.name = name + "-" + std::to_string(::getpid());
    // Selected by the name podman gives it (a glob on it).
    zero_touch_daemon z(dir, "container = \"" + name + "-*\"");
    serve_process& d = *z.d;
    ASSERT_TRUE(d.ready()) << d.log();
    spec.shared = {dir.path()};
    std::vector<std::string> jvm_flags = {"-Xmx64m"};
    jvm_flags.insert(jvm_flags.end(), flags.begin(), flags.end());
    podman_jvm c(spec, java_main{"OomExit"}, jvm_flags, {dir.file("go")}, dir.file("jvm.out"));
    ASSERT_TRUE(c.ready()) << file_text(dir.file("jvm.out"));
    expect_armed_for_collection(d, c.pid(), nullptr, state);
    // Named by the name podman gave it (its conmon's), and the hostname it set.
    json row = armed_row(d, c.pid());
    const json named = row.value("container", json::object());
    EXPECT_EQ(named.value("runtime", ""), "podman") << row;
    EXPECT_EQ(named.value("name", ""), spec.name) << row;
    EXPECT_EQ(named.value("hostname", ""), spec.name) << row;
    EXPECT_EQ(named.value("id", "").size(), 64u) << row;
    EXPECT_NE(run_heapctl(d, {"jvms"}).out.find(spec.name), std::string::npos);
    touch(dir.file("go"));
    ASSERT_TRUE(ended(c.pid()));
    // Removed with its /tmp the moment its JVM exited.
    for (int i = 0; i < 300 && c.exists(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(c.exists());
    const std::string out = file_text(dir.file("jvm.out"));
    EXPECT_NE(out.find("Dumping heap to " + dump_at), std::string::npos) << out;
    json job = finished_dump_job(d, c.pid());
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    const std::string report = expect_leak_report(d, c.pid(), "OomExit");
    // The report, the dump and the JVM's death name the container, gone since.
    EXPECT_NE(report.find("in container " + spec.name + ", trigger oom"), std::string::npos) << report;
    json dumps = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(dumps.size(), 1u);
    EXPECT_EQ(dumps[0].value("container", json::object()).value("name", ""), spec.name) << dumps;
    json death;
    for (int i = 0; i < 100 && death.empty(); ++i) {
        for (const json& item : json::parse(run_heapctl(d, {"deaths", "--json"}).out))
            if (item.value("death", json::object()).value("pid", 0) == c.pid()) death = item["death"];
        if (death.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(death.value("container", json::object()).value("name", ""), spec.name) << death << d.log();
}

TEST(zero_touch, a_container_that_exits_on_its_oom_and_is_removed_has_its_oom_reported) {
    run_container("heapd-zt-exit", {"-XX:+ExitOnOutOfMemoryError"}, "/tmp/heapd-oom-1-", "armed");
}

TEST(zero_touch, a_container_that_dumps_into_its_own_tmp_and_is_removed_has_its_oom_reported) {
    // The flags most Kubernetes users set: the JVM's own dump, in a /tmp deleted with the container.
    run_container("heapd-zt-own", {"-XX:+HeapDumpOnOutOfMemoryError", "-XX:HeapDumpPath=/tmp"}, "/tmp/java_pid1.hprof",
                  "own_path");
}

}  // namespace
}  // namespace heapd::test
