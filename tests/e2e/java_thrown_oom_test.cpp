// The OutOfMemoryErrors that -XX:OnOutOfMemoryError does not see, caught by heapd's agent loaded at
// the JVM's start (-agentpath:libheapd_agent.so=oom) beside the hook: `Cannot reserve … bytes of
// direct buffer memory` at -XX:MaxDirectMemorySize, and `unable to create native thread` at a real
// pids cgroup's limit. Each time the thread making the error waits while heapd dumps the JVM, and
// the report names the kind of error, where it was made, and the static field holding the buffers
// or threads. A metaspace leak is the hook's (HotSpot's own error): one dump, naming the loaders.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "formats/wire/protocol.h"
#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/oom_scenario.h"
#include "support/serve_process.h"
#include "support/test_cgroup.h"

namespace heapd::test {
namespace {

using wire::json;

std::string agent_flag(const serve_process& d) {
    return "-agentpath:" + std::string(HEAPD_BINARY_DIR) + "/daemon/libheapd_agent.so=oom,socket=" + d.socket();
}

// The JVM's last dump as `heapctl dumps --json` lists it, and its report as JSON and as text.
struct kept_report {
    json dump, report;
    std::string text;
};

kept_report report_of(const serve_process& d, pid_t pid, const temp_user* as) {
    kept_report k;
    const json dumps = json::parse(run_heapctl(d, {"dumps", "--json"}, as).out, nullptr, false);
    if (dumps.is_array())
        for (const json& e : dumps)
            if (e.value("pid", 0) == pid && k.dump.is_null()) k.dump = e;
    auto j = run_heapctl(d, {"report", std::to_string(pid), "--json"}, as);
    EXPECT_EQ(j.exit_code, 0) << j.err;
    k.report = json::parse(j.out, nullptr, false);
    k.text = run_heapctl(d, {"report", std::to_string(pid)}, as).out;
    return k;
}

// The record of the JVM's death as `heapctl deaths --json` lists it (waits for it up to a minute).
json death_of(const serve_process& d, pid_t pid) {
    for (int i = 0; i < 300; ++i) {
        const json list = json::parse(run_heapctl(d, {"deaths", "--json"}).out, nullptr, false);
        if (list.is_array())
            for (const json& item : list)
                if (item["death"]["pid"] == pid) return item["death"];
        ::usleep(200 * 1000);
    }
    return json();
}

// The number of threads of a process (/proc/PID/status).
int threads_of(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);)
        if (line.starts_with("Threads:")) return std::stoi(line.substr(8));
    return -1;
}

TEST(java_thrown_oom, direct_buffer_memory_is_dumped_at_the_error_and_names_the_holder) {
    temp_user owner;
    ASSERT_TRUE(owner.ok());
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    shared_dir work;
    ASSERT_EQ(::chown(work.path().c_str(), owner.uid(), owner.gid()), 0);
    const std::string trigger = work.file("grow");
    // 8 MiB of buffers at once, then 1 MiB every 5 ms until the JVM's 48 MiB of direct memory are gone.
    isolated_jvm jvm(
        java_main{"OffHeap"},
        {"-Xmx64m", "-XX:MaxDirectMemorySize=48m", agent_flag(d), hook_flag(d, work.path(), work.file("spool"))},
        {"8", "2", trigger}, isolation{&owner, false, work.path()});
    ASSERT_TRUE(jvm.ready());
    ASSERT_FALSE(armed_row(d, jvm.pid(), &owner).empty()) << d.log();
    std::ofstream(trigger) << "grow\n";
    json job = finished_dump_job(d, jvm.pid());
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    EXPECT_EQ(job["trigger"], "oom");
    EXPECT_EQ(job["owner_uid"], owner.uid());
    ASSERT_TRUE(ended(jvm.pid()));  // its main thread died of the error, thrown after the dump

    kept_report k = report_of(d, jvm.pid(), &owner);
    EXPECT_EQ(k.dump["oom_kind"], "direct-buffer") << k.dump;
    EXPECT_EQ(k.dump["oom_error"],
              "java.lang.OutOfMemoryError made in java.nio.Bits.reserveMemory, called by OffHeap.touched");
    json& b = k.report["off_heap"]["direct_buffers"];
    // The heap as it was at the error: Bits has reserved all of the JVM's direct memory.
    EXPECT_EQ(b["jvm"]["max_bytes"], 48 << 20) << b;
    EXPECT_EQ(b["jvm"]["capacity_bytes"], 48 << 20) << b;
    const std::string path =
        b["holders"][0]["path"]["text"].is_string() ? b["holders"][0]["path"]["text"].get<std::string>() : "";
    EXPECT_NE(path.find("class OffHeap (static HELD)"), std::string::npos) << path;
    EXPECT_GE(b["holders"][0]["count"].is_number() ? b["holders"][0]["count"].get<int>() : 0, 40);
    EXPECT_NE(k.text.find(", trigger oom (direct-buffer: java.lang.OutOfMemoryError made in "
                          "java.nio.Bits.reserveMemory, called by OffHeap.touched)"),
              std::string::npos)
        << k.text;
    EXPECT_NE(k.text.find("class OffHeap (static HELD)"), std::string::npos) << k.text;
    EXPECT_NE(run_heapctl(d, {"dumps"}, &owner).out.find("oom direct-buffer"), std::string::npos);
    EXPECT_NE(d.log().find("(trigger oom: direct-buffer, java.lang.OutOfMemoryError made in java.nio.Bits"),
              std::string::npos)
        << d.log();
}

TEST(java_thrown_oom, a_thread_leak_at_a_pids_limit_is_dumped_with_its_thread_groups_and_its_death_recorded) {
    test_cgroup pids("pids");
    if (!pids.ok()) GTEST_SKIP() << "no writable cgroup v1 pids hierarchy here";
    shared_dir work;
    const std::string config = work.file("heapd.toml");
    std::ofstream(config) << "[daemon]\npoll_interval = \"500ms\"\n";
    serve_process d({"--spool", "", "--config", config});
    ASSERT_TRUE(d.ready()) << d.log();
    const std::string trigger = work.file("grow");
    demo_jvm jvm(java_main{"ThreadLeak"}, {"-Xmx64m", agent_flag(d), hook_flag(d, work.path(), work.file("spool"))},
                 {"10", trigger});
    ASSERT_TRUE(jvm.ready());
    ASSERT_FALSE(armed_row(d, jvm.pid()).empty()) << d.log();  // its attach listener runs from now on
    const int threads = threads_of(jvm.pid());
    ASSERT_GT(threads, 10);
    ASSERT_TRUE(pids.set("pids.max", std::to_string(threads + 30)));
    ASSERT_TRUE(pids.add(jvm.pid()));
    std::ofstream(trigger) << "grow\n";
    json job = finished_dump_job(d, jvm.pid());
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    ASSERT_TRUE(ended(jvm.pid()));

    kept_report k = report_of(d, jvm.pid(), nullptr);
    EXPECT_EQ(k.dump["oom_kind"], "native-thread") << k.dump;
    EXPECT_EQ(k.dump["oom_error"],
              "java.lang.OutOfMemoryError made in java.lang.Thread.start0, called by ThreadLeak.leak");
    json& t = k.report["off_heap"]["threads"];
    int leaked = 0;
    for (const json& g : t["by_name"])
        if (g["key"] == "leak-#") leaked = g["count"];
    EXPECT_GE(leaked, 30) << t["by_name"];
    const std::string held =
        t["holders"][0]["path"]["text"].is_string() ? t["holders"][0]["path"]["text"].get<std::string>() : "";
    EXPECT_NE(held.find("class ThreadLeak (static LEAKED)"), std::string::npos) << held;
    EXPECT_GE(t["holders"][0]["count"].is_number() ? t["holders"][0]["count"].get<int>() : 0, leaked) << t["holders"];
    // The dump is of the moment of the error: the main thread is in the error's constructor.
    EXPECT_NE(k.text.find("at java.lang.OutOfMemoryError.<init>("), std::string::npos) << k.text;
    EXPECT_NE(k.text.find("threads held by: "), std::string::npos) << k.text;

    // The JVM died of it (its main thread's uncaught error: exit code 1), and heapd says so.
    const json death = death_of(d, jvm.pid());
    ASSERT_TRUE(death.is_object()) << d.log();
    EXPECT_EQ(death["status"]["code"], 1) << death;
    EXPECT_EQ(death["main_class"], "ThreadLeak");
    EXPECT_EQ(death["oom_dump"], k.dump["id"]) << death;
}

TEST(java_thrown_oom, a_metaspace_leak_is_the_hooks_one_dump_and_names_the_loaders_and_their_holder) {
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    shared_dir work;
    const std::string trigger = work.file("deploy");
    // The agent is there too: HotSpot's metaspace error is its own, never constructed, so the agent
    // stays out of it and the hook takes the one dump.
    demo_jvm jvm(java_main{"LoaderLeak"},
                 {"-Xmx128m", "-XX:MaxMetaspaceSize=24m", agent_flag(d), hook_flag(d, work.path(), work.file("spool"))},
                 {"20", trigger});
    ASSERT_TRUE(jvm.ready());
    ASSERT_FALSE(armed_row(d, jvm.pid()).empty()) << d.log();
    std::ofstream(trigger) << "deploy\n";
    ASSERT_GE(hook_ms(work.path()), 0);
    json job = finished_dump_job(d, jvm.pid());
    ASSERT_EQ(job.value("state", ""), "done") << job << d.log();
    ASSERT_TRUE(ended(jvm.pid()));

    const json dumps = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(dumps.size(), 1u) << dumps;
    EXPECT_EQ(dumps[0]["trigger"], "oom");
    EXPECT_FALSE(dumps[0].contains("oom_kind")) << dumps[0];
    kept_report k = report_of(d, jvm.pid(), nullptr);
    json& l = k.report["off_heap"]["class_loaders"];
    EXPECT_EQ(l["duplicates"][0]["class"], "LoaderLeakPlugin") << l["duplicates"];
    EXPECT_GE(l["duplicates"][0]["loaders"].is_number() ? l["duplicates"][0]["loaders"].get<int>() : 0, 100);
    const std::string held =
        l["holders"][0]["path"]["text"].is_string() ? l["holders"][0]["path"]["text"].get<std::string>() : "";
    EXPECT_NE(held.find("class LoaderLeak (static KEPT)"), std::string::npos) << held;
    EXPECT_TRUE(held.ends_with("java.net.URLClassLoader")) << held;

    // It exited when its hook returned, before its dump was stored: its death record names the
    // dump all the same, and `heapctl deaths` says so.
    const json death = death_of(d, jvm.pid());
    ASSERT_TRUE(death.is_object()) << d.log();
    EXPECT_EQ(death["oom_dump"], dumps[0]["id"]) << death << d.log();
    const std::string listed = run_heapctl(d, {"deaths"}).out;
    EXPECT_NE(listed.find("its OutOfMemoryError's dump: " + dumps[0]["id"].get<std::string>()), std::string::npos)
        << listed;
}

}  // namespace
}  // namespace heapd::test
