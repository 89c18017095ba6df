// The benchmarks' dump generator (bench/heap_generator.h): heapd reads every object it wrote, and
// each container retains exactly the bytes the generator counted by HotSpot 17's object sizes.
// (VisualVM's heap library agrees on the same figures: tests/e2e/retention_test.cpp.)
#include "heap_generator.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "support/generated_dump.h"
#include "support/jvm_process.h"

namespace heapd {
namespace {

nlohmann::json run_json(const std::vector<std::string>& argv) {
    test::command_result r = test::run_command(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
}

std::string contents(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(heap_generator, heapd_reads_every_object_and_what_each_container_retains) {
    test::scratch_dir dir;
    const test::generated_dump dump = test::generate_dump(dir.path() + "/generated.hprof", "24M", 16384);
    const nlohmann::json report = run_json({test::heapd_binary(), "analyze", "--json", "--no-threads", "--no-waste",
                                            "--no-index", "--top", "5", dump.path});
    const nlohmann::json& summary = report.at("summary");
    EXPECT_EQ(summary.at("file_bytes").get<std::uint64_t>(), dump.bytes);
    EXPECT_GE(dump.bytes, 24u << 20);
    const std::uint64_t objects =
        summary.at("instances").get<std::uint64_t>() + summary.at("object_arrays").get<std::uint64_t>() +
        summary.at("primitive_arrays").get<std::uint64_t>() + summary.at("classes").get<std::uint64_t>();
    EXPECT_EQ(objects, dump.objects);
    EXPECT_EQ(report.at("reachability").at("reachable_objects").get<std::uint64_t>(), dump.objects);
    EXPECT_EQ(summary.at("field_rules").get<std::string>(), "JDK 15 to 18");
    EXPECT_EQ(summary.at("layout").get<std::string>(), "64-bit, compressed oops");

    // 4 loaders x a chain, a map, a list and payloads, each in a list of its kind in a static field;
    // those of two loaders are checked (each check builds the graph again).
    ASSERT_EQ(dump.containers.size(), 16u);
    ASSERT_EQ(dump.holders.size(), 16u);
    std::vector<test::generated_dump::container> checked;
    for (const auto& c : dump.containers)
        if (c.loader < 2) checked.push_back(c);
    for (const auto& c : dump.holders)
        if (c.loader == 3) checked.push_back(c);
    for (const auto& c : checked) {
        const nlohmann::json path = run_json({test::heapd_binary(), "path", "--json", dump.path, std::to_string(c.id)});
        EXPECT_EQ(path.at("retained_bytes").get<std::uint64_t>(), c.retained) << c.kind << " " << c.id;
        EXPECT_TRUE(path.at("reachable").get<bool>()) << c.id;
    }

    // The same options write the same bytes.
    const test::generated_dump again = test::generate_dump(dir.path() + "/again.hprof", "24M", 16384);
    EXPECT_EQ(again.objects, dump.objects);
    EXPECT_TRUE(contents(again.path) == contents(dump.path));
}

}  // namespace
}  // namespace heapd
