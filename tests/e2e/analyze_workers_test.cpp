// heapd analyze gives the same report, byte for byte, whatever the number of threads that work at
// once (--workers): on a real JVM's dump of a session cache (maps of small objects, many short and
// partly duplicate strings) and on a generated dump of long chains, big maps and four class loaders.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/generated_dump.h"
#include "support/jvm_process.h"

namespace heapd::test {
namespace {

// `heapd analyze --json` of file with the given number of workers: its whole output.
std::string report_with(const std::string& file, const std::string& workers) {
    auto r = run_command({heapd_binary(), "analyze", "--json", "--top", "0", "--no-index", "--workers", workers, file});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
}

// The reports with 1, 2 and 4 workers are equal; returns the report.
nlohmann::json expect_same_reports(const std::string& file) {
    const std::string one = report_with(file, "1");
    EXPECT_EQ(report_with(file, "2"), one);
    EXPECT_EQ(report_with(file, "4"), one);
    return nlohmann::json::parse(one);
}

TEST(analyze_workers, a_session_cache_dump_gives_one_report_whatever_the_threads) {
    demo_jvm jvm(java_main{"SessionCache"}, {"-Xmx256m"}, {"40000"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    const std::string file = dir.file("heap.hprof");
    const auto dumped = jvm.jcmd({"GC.heap_dump", file});
    ASSERT_EQ(dumped.exit_code, 0) << dumped.out << dumped.err;
    const nlohmann::json r = expect_same_reports(file);
    // What differs between the paths when threads are used: the graph's parts, the waste beside the
    // dominator tree. Each has its part of the report here.
    EXPECT_GT(r.at("summary").at("instances").get<std::uint64_t>(), 200'000u);
    EXPECT_GT(r.at("waste").at("duplicate_strings").at("groups").get<std::uint64_t>(), 100u);
    EXPECT_FALSE(r.at("waste").at("collections").empty());
    EXPECT_FALSE(r.at("waste").at("boxed").empty());
    EXPECT_FALSE(r.at("leak_suspects").empty());
    EXPECT_FALSE(r.at("dominators").empty());
}

TEST(analyze_workers, a_generated_dump_gives_one_report_whatever_the_threads) {
    scratch_dir dir;
    const generated_dump g = generate_dump(dir.file("gen.hprof"), "1M", 30'000);
    const nlohmann::json r = expect_same_reports(g.path);
    EXPECT_EQ(r.at("summary").at("instances").get<std::uint64_t>() +
                  r.at("summary").at("object_arrays").get<std::uint64_t>() +
                  r.at("summary").at("primitive_arrays").get<std::uint64_t>() +
                  r.at("summary").at("classes").get<std::uint64_t>(),
              g.objects);
}

}  // namespace
}  // namespace heapd::test
