// `heapd memory` against real JVMs in real memory cgroups made by the test: the limit is the
// cgroup's, and each part heapd measures on its own agrees with Native Memory Tracking on the same
// JVM (-XX:NativeMemoryTracking=summary, read with jcmd; JDK 17 and, where present, JDK 25); the parts add up to
// the resident memory; without attach the figures that need the JVM are left out and say so.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "formats/memory/jcmd_figures.h"
#include "support/jvm_process.h"
#include "support/test_cgroup.h"

namespace heapd::test {
namespace {

using json = nlohmann::json;
constexpr std::int64_t mib = 1 << 20;

json heapd_memory(pid_t pid, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {heapd_binary(), "memory", std::to_string(pid), "--json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const command_result r = run_command(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false);
}

const json& part(const json& b, const std::string& name) {
    static const json none;
    for (const json& p : b["parts"])
        if (p["name"] == name) return p;
    ADD_FAILURE() << "no part " << name << " in " << b.dump();
    return none;
}

// Within 10% of NMT's figure or 1 MiB of it (closer than the 8 MiB heapd promises, so that a part
// measured wrong on this small JVM shows).
void expect_near(std::int64_t heapd, std::int64_t nmt, const std::string& what) {
    const std::int64_t allowed = std::max<std::int64_t>(mib, nmt / 10);
    EXPECT_LE(std::llabs(heapd - nmt), allowed) << what << ": heapd " << heapd << ", NMT " << nmt;
}

// heapd's own figures for the JVM pid against NMT's, read with that JDK's jcmd.
void expect_agreement_with_nmt(pid_t pid, const std::string& jcmd) {
    const json b = heapd_memory(pid);
    ASSERT_TRUE(b.is_object());
    const command_result nmt_text = run_command({jcmd, std::to_string(pid), "VM.native_memory", "summary"});
    const auto nmt = parse_nmt_summary(nmt_text.out);
    ASSERT_TRUE(nmt) << nmt_text.out;

    // Each category heapd measures itself, against NMT's committed figure.
    expect_near(part(b, "java_heap")["committed"], nmt->find("Java Heap")->committed, "Java heap");
    expect_near(part(b, "metaspace")["committed"], *nmt->metadata_committed + *nmt->class_space_committed,
                "metaspace and class space");
    expect_near(part(b, "code_cache")["committed"], nmt->find("Code")->committed, "code cache");
    // NMT counts a thread stack's pages by what is resident, and each Java thread's guard zone (4
    // pages the JVM protects, never touched, not resident) as committed besides: heapd reads smaps.
    const std::int64_t guards = 16 * 1024 * part(b, "thread_stacks")["count"].get<std::int64_t>();
    expect_near(part(b, "thread_stacks")["resident"].get<std::int64_t>() + guards, *nmt->stack_committed,
                "thread stacks and the Java threads' guard zones");
    EXPECT_LT(part(b, "thread_stacks")["resident"].get<std::int64_t>(), *nmt->stack_committed);
    // NMT's threads are the JVM's own (not the launcher's primordial thread); heapd counts tasks.
    EXPECT_NEAR(part(b, "thread_stacks")["count"].get<double>(), static_cast<double>(*nmt->threads), 3);
    EXPECT_GE(part(b, "thread_stacks")["count"].get<int>(), 100);
    // The 40 MiB of direct buffers are malloc'd (NMT's Other) and in other_native.
    EXPECT_GE(part(b, "other_native")["resident"].get<std::int64_t>() + 8 * mib, nmt->find("Other")->committed);
    EXPECT_GE(nmt->find("Other")->committed, 40 * mib);

    // The parts account for every resident byte (the metaspace as committed).
    std::int64_t sum = part(b, "metaspace")["committed"].get<std::int64_t>();
    for (const char* name : {"java_heap", "code_cache", "thread_stacks", "mapped_files", "other_native"})
        sum += part(b, name)["resident"].get<std::int64_t>();
    EXPECT_NEAR(static_cast<double>(sum), b["resident"].get<double>(), 2.0 * mib);
    EXPECT_GT(b["resident"].get<std::int64_t>(), 40 * mib);
    EXPECT_EQ(b["nmt"]["committed"].get<std::int64_t>() / mib, nmt->committed / mib);
}

TEST(memory_command, agrees_with_native_memory_tracking_in_a_real_cgroup) {
    test_cgroup cgroup("memory");
    if (!cgroup.ok()) GTEST_SKIP() << "no writable cgroup v1 memory hierarchy here";
    ASSERT_TRUE(cgroup.set("memory.limit_in_bytes", std::to_string(400 * mib)));
    demo_jvm jvm(java_main{"OffHeap"}, {"-Xmx64m", "-XX:NativeMemoryTracking=summary"}, {"40", "100"});
    ASSERT_TRUE(jvm.ready());
    ASSERT_TRUE(cgroup.add(jvm.pid()));
    expect_agreement_with_nmt(jvm.pid(), "jcmd");

    const json b = heapd_memory(jvm.pid());
    EXPECT_EQ(b["limit"]["bytes"], 400 * mib);
    EXPECT_EQ(b["limit"]["source"], "cgroup v1 " + cgroup.path());
    EXPECT_EQ(b["limit"]["oom_kills"], 0);
    // The text names the limit and each part.
    const command_result text = run_command({heapd_binary(), "memory", std::to_string(jvm.pid())});
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("of 400 MiB (cgroup v1 " + cgroup.path() + ")"), std::string::npos) << text.out;
    for (const char* title : {"Java heap", "Metaspace", "Code cache", "Thread stacks", "Mapped files", "Other native",
                              "Native Memory Tracking"})
        EXPECT_NE(text.out.find(title), std::string::npos) << title << " in\n" << text.out;
}

// JDK 21 and later print metaspace in VM.metaspace, not GC.heap_info, and NMT's summary otherwise.
TEST(memory_command, agrees_with_native_memory_tracking_on_jdk25) {
    const std::string jdk = jdk25_bin();
    if (jdk.empty()) GTEST_SKIP() << "no JDK 25 (/usr/lib/jvm/temurin-25-jdk-amd64)";
    const started_process jvm = start_until_ready({jdk + "java", "-Xmx64m", "-XX:NativeMemoryTracking=summary", "-cp",
                                                   test_classes_dir(), "OffHeap", "40", "100"});
    // Killed however the test ends.
    const std::unique_ptr<const started_process, void (*)(const started_process*)> end(
        &jvm, [](const started_process* p) {
            ::kill(p->pid, SIGKILL);
            ::waitpid(p->pid, nullptr, 0);
        });
    ASSERT_TRUE(jvm.ready);
    expect_agreement_with_nmt(jvm.pid, jdk + "jcmd");
}

TEST(memory_command, without_attach_or_tracking_what_needs_the_jvm_is_left_out) {
    // The serial collector: its hsperfdata counts the young generation's use as it grows (G1's
    // counts it at each collection, so a young JVM shows none).
    demo_jvm jvm(java_main{"OffHeap"}, {"-Xmx64m", "-XX:+UseSerialGC"}, {"8", "2"});
    ASSERT_TRUE(jvm.ready());
    // Its spaces' used bytes are sampled every 50 ms (PerfDataSamplingInterval): on a busy machine
    // the first sample may come after "ready".
    json quiet, heap;
    for (int i = 0; i < 50; ++i) {
        quiet = heapd_memory(jvm.pid(), {"--no-attach"});
        ASSERT_TRUE(quiet.is_object());
        heap = part(quiet, "java_heap");
        if (heap.value("used", std::int64_t{0}) > 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    // The heap's range is unknown: at least its used bytes (hsperfdata's) are counted as heap.
    ASSERT_TRUE(heap.contains("committed")) << heap;  // hsperfdata's
    EXPECT_GT(heap.value("used", std::int64_t{0}), 0) << heap;
    EXPECT_EQ(heap.value("resident", std::int64_t{-1}), heap.value("used", std::int64_t{0})) << heap;
    EXPECT_NE(heap["source"].get<std::string>().find("at least its used bytes"), std::string::npos) << heap;
    EXPECT_FALSE(part(quiet, "code_cache").contains("resident"));
    EXPECT_GT(part(quiet, "thread_stacks")["resident"].get<std::int64_t>(), 0);
    EXPECT_FALSE(quiet.contains("nmt"));
    EXPECT_NE(quiet["notes"].dump().find("not asked through attach"), std::string::npos) << quiet.dump();

    const json asked = heapd_memory(jvm.pid());
    EXPECT_TRUE(part(asked, "java_heap").contains("resident"));
    EXPECT_FALSE(asked.contains("nmt"));  // tracking is off
    EXPECT_NE(asked["limit"]["source"].get<std::string>().find("the host's memory"), std::string::npos);
}

TEST(memory_command, a_process_that_is_gone_is_an_error) {
    const pid_t gone = 999999;
    const command_result r = run_command({heapd_binary(), "memory", std::to_string(gone)});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("999999"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace heapd::test
