// heapd analyze on real JVMs whose memory is mostly outside the heap: the report's off-heap part
// counts their direct buffers (against java.nio.Bits's own count), groups their threads by name and
// stack, counts their class loaders and the classes defined more than once, and names the static
// field that holds each of them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/jvm_process.h"

namespace heapd::test {
namespace {

using json = nlohmann::json;

// The JVM's heap dump analysed by heapd: the JSON report and the text one.
struct analysed {
    json report;
    std::string text;
};

analysed dump_and_analyze(const demo_jvm& jvm, const scratch_dir& dir) {
    const std::string file = dir.file("heap.hprof");
    auto d = jvm.jcmd({"GC.heap_dump", file});
    EXPECT_EQ(d.exit_code, 0) << d.out << d.err;
    auto j = run_command({heapd_binary(), "analyze", "--json", file});
    EXPECT_EQ(j.exit_code, 0) << j.err;
    auto t = run_command({heapd_binary(), "analyze", file});
    EXPECT_EQ(t.exit_code, 0) << t.err;
    return {json::parse(j.out), t.out};
}

// The group of a list whose key (or, for holders, path text) contains what.
json find_group(const json& groups, const std::string& what) {
    for (const json& g : groups) {
        const std::string key = g.contains("path") ? g.at("path").at("text").get<std::string>() : g.value("key", "");
        if (key.find(what) != std::string::npos) return g;
    }
    ADD_FAILURE() << "no group with " << what << " in " << groups.dump(1);
    return json::object();
}

TEST(off_heap_report, direct_buffers_and_threads_with_the_static_fields_that_hold_them) {
    demo_jvm jvm(java_main{"OffHeap"}, {"-Xmx64m", "-XX:MaxDirectMemorySize=512m"}, {"24", "6"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    const analysed a = dump_and_analyze(jvm, dir);
    const json& o = a.report.at("off_heap");
    ASSERT_TRUE(o.at("computed").get<bool>());

    const json& b = o.at("direct_buffers");
    EXPECT_GE(b.at("allocated").get<std::uint64_t>(), 25u);  // and the one under the slice
    EXPECT_GE(b.at("views").get<std::uint64_t>(), 1u);       // OffHeap's slice: no memory of its own
    // java.nio.Bits counts every buffer whose memory is not yet freed, garbage included.
    EXPECT_EQ(b.at("jvm").at("count").get<std::uint64_t>(),
              b.at("allocated").get<std::uint64_t>() + b.at("unreachable").get<std::uint64_t>());
    EXPECT_EQ(b.at("jvm").at("capacity_bytes").get<std::uint64_t>(),
              b.at("allocated_bytes").get<std::uint64_t>() + b.at("unreachable_bytes").get<std::uint64_t>());
    EXPECT_EQ(b.at("jvm").at("max_bytes").get<std::uint64_t>(), 512u << 20);
    const json held = b.at("holders").at(0);
    EXPECT_EQ(held.at("count").get<std::uint64_t>(), 24u);
    EXPECT_EQ(held.at("bytes").get<std::uint64_t>(), 24u << 20);
    const std::string path = held.at("path").at("text").get<std::string>();
    EXPECT_NE(path.find("class OffHeap (static HELD)"), std::string::npos) << path;
    EXPECT_TRUE(path.ends_with("java.nio.DirectByteBuffer")) << path;

    const json& t = o.at("threads");
    EXPECT_EQ(t.at("count").get<std::uint64_t>(), a.report.at("threads").size());
    EXPECT_EQ(find_group(t.at("by_name"), "worker-#").at("count"), 6);
    EXPECT_GE(find_group(t.at("by_stack"), "java.lang.Thread.sleep(").at("count").get<int>(), 6);
    const json workers = find_group(t.at("holders"), "static WORKERS");
    EXPECT_EQ(workers.at("count"), 6);
    EXPECT_TRUE(workers.at("path").at("text").get<std::string>().ends_with("java.lang.Thread"));

    EXPECT_NE(a.text.find("Off-heap memory"), std::string::npos) << a.text;
    EXPECT_NE(a.text.find("24 buffers, 24.0 MiB: "), std::string::npos) << a.text;
    EXPECT_NE(a.text.find("class OffHeap (static HELD)"), std::string::npos) << a.text;
    EXPECT_NE(a.text.find("6 threads held by: "), std::string::npos) << a.text;
    EXPECT_NE(a.text.find("6 worker-#"), std::string::npos) << a.text;
}

TEST(off_heap_report, a_class_loader_leak_names_the_duplicated_class_and_what_keeps_the_loaders) {
    demo_jvm jvm(java_main{"LoaderLeak"}, {"-Xmx64m"}, {"30"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    const analysed a = dump_and_analyze(jvm, dir);
    const json& l = a.report.at("off_heap").at("class_loaders");
    bool found = false;
    for (const json& e : l.at("by_class"))
        if (e.at("class") == "java.net.URLClassLoader") {
            found = true;
            EXPECT_EQ(e.at("loaders"), 30);
            EXPECT_GE(e.at("classes").get<int>(), 30);
        }
    EXPECT_TRUE(found) << l.dump(1);
    const json& top = l.at("duplicates").at(0);
    EXPECT_EQ(top.at("class"), "LoaderLeakPlugin");
    EXPECT_EQ(top.at("loaders"), 30);
    const json held = l.at("holders").at(0);
    EXPECT_EQ(held.at("count"), 30);
    const std::string path = held.at("path").at("text").get<std::string>();
    EXPECT_NE(path.find("class LoaderLeak (static KEPT)"), std::string::npos) << path;
    EXPECT_TRUE(path.ends_with("java.net.URLClassLoader")) << path;
    EXPECT_NE(a.text.find("LoaderLeakPlugin \u00d730"), std::string::npos) << a.text;
}

}  // namespace
}  // namespace heapd::test
