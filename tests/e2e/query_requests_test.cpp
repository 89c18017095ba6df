// Questions about stored dumps through the real daemon and heapctl: a JVM that leaks on demand
// (tests/java/Leaky.java) is dumped, grows by exactly N objects, and is dumped again; `heapctl diff
// PID` and `heapctl diff A B` name the leaking class with +N instances, the report of the second
// dump says what grew since the first, and `heapctl path` finds the leak's path from a GC root
// in a job (the answer then kept with the dump). Another user may not ask about root's dumps.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "formats/wire/protocol.h"
#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using wire::json;

constexpr int leak_count = 30000;

const json* row(const json& list, const std::string& name) {
    for (const json& e : list)
        if (e.at("class") == name) return &e;
    return nullptr;
}

TEST(query_requests, diff_growth_and_paths_of_a_leaking_jvm) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    scratch_dir dir;
    demo_jvm jvm(java_main{"Leaky"}, {"-Xmx256m", "-Xshare:off"}, {dir.file("trigger"), std::to_string(leak_count)});
    ASSERT_TRUE(jvm.ready());
    const std::string pid = std::to_string(jvm.pid());

    // One dump: nothing to compare yet.
    ASSERT_TRUE(leaky_grow(dir.file("trigger")));
    auto first = run_heapctl(d, {"dump", pid, "--wait", "--json"});
    ASSERT_EQ(first.exit_code, 0) << first.err << d.log();
    auto lonely = run_heapctl(d, {"diff", pid});
    EXPECT_EQ(lonely.exit_code, 5) << lonely.out << lonely.err;
    EXPECT_NE(lonely.err.find("only one dump"), std::string::npos) << lonely.err;

    ASSERT_TRUE(leaky_grow(dir.file("trigger")));
    auto second = run_heapctl(d, {"dump", pid, "--wait", "--json"});
    ASSERT_EQ(second.exit_code, 0) << second.err << d.log();
    auto dumps = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(dumps.size(), 2u);
    const std::string newer = dumps[0]["id"], older = dumps[1]["id"];
    EXPECT_EQ(dumps[0]["jvm_start_time"], dumps[1]["jvm_start_time"]);
    EXPECT_NE(dumps[0]["jvm_start_time"], 0);

    // The two latest dumps of the JVM, and the same two named.
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"diff", pid, "--json"}, std::vector<std::string>{"diff", older, newer, "--json"}}) {
        auto diffed = run_heapctl(d, args);
        ASSERT_EQ(diffed.exit_code, 0) << diffed.err;
        json j = json::parse(diffed.out);
        EXPECT_EQ(j["before"]["id"], older);
        EXPECT_EQ(j["after"]["id"], newer);
        const json& grew = j["diff"]["grew"];
        ASSERT_FALSE(grew.empty()) << j.dump(1);
        EXPECT_EQ(grew[0]["class"], "Leaky") << grew.dump(1);
        EXPECT_EQ(grew[0]["instances_delta"], leak_count);
        EXPECT_EQ(grew[0]["instances_before"], leak_count);
        EXPECT_TRUE(j["diff"]["retained"].get<bool>());
        // Every class's retained size is kept, so holders far down the list compare too.
        const json* list = row(grew, "java.util.ArrayList");
        ASSERT_NE(list, nullptr) << grew.dump(1);
        EXPECT_GT((*list)["retained_bytes_delta"].get<long long>(), leak_count * 16LL);
    }
    auto text = run_heapctl(d, {"diff", pid});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("Grew most: Leaky\n  +30,000 instances (+100.0%)"), std::string::npos) << text.out;

    // The report of the second dump says what grew since the first; the first's says nothing.
    auto report = run_heapctl(d, {"report", newer});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    // Its heading says which dump of which JVM, and why it was taken.
    EXPECT_EQ(report.out.rfind("heapctl report: dump " + newer + " of ", 0), 0u) << report.out;
    EXPECT_NE(report.out.find(", pid " + pid + " (Leaky), trigger request\n"), std::string::npos) << report.out;
    EXPECT_NE(report.out.find("Since the previous dump of this JVM (" + older), std::string::npos) << report.out;
    EXPECT_NE(report.out.find("Grew most: Leaky"), std::string::npos) << report.out;
    auto old_report = run_heapctl(d, {"report", older});
    EXPECT_EQ(old_report.out.find("Since the previous dump"), std::string::npos) << old_report.out;

    // The path to the leak's backing array, from the suspect the report names.
    json suspects = json::parse(second.out)["leak_suspects"]["suspects"];
    ASSERT_FALSE(suspects.empty()) << second.out;
    const std::uint64_t array = suspects[0]["accumulation_point"]["id"].get<std::uint64_t>();
    char id[32];
    std::snprintf(id, sizeof id, "0x%llx", static_cast<unsigned long long>(array));
    auto path = run_heapctl(d, {"path", pid, id, "--roots", "2"});
    ASSERT_EQ(path.exit_code, 0) << path.err << d.log();
    EXPECT_NE(path.out.find("class Leaky (static LEAKED) → java.util.ArrayList.elementData → java.lang.Object[]"),
              std::string::npos)
        << path.out;
    auto jobs_before = json::parse(run_heapctl(d, {"jobs", "--json"}).out).size();
    auto again = run_heapctl(d, {"path", newer, id, "--roots", "2", "--json"});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    json paths = json::parse(again.out);
    EXPECT_EQ(paths["id"], array);
    EXPECT_TRUE(paths["reachable"].get<bool>());
    EXPECT_EQ(paths["paths"].size(), 2u);
    EXPECT_EQ(json::parse(run_heapctl(d, {"jobs", "--json"}).out).size(), jobs_before)
        << "asked again: answered from the entry";

    auto missing = run_heapctl(d, {"path", newer, "0x1"});
    EXPECT_EQ(missing.exit_code, 5) << missing.out << missing.err;
    EXPECT_NE(missing.err.find("no object 0x1"), std::string::npos) << missing.err;
    auto bad_id = run_heapctl(d, {"path", newer, "zebra"});
    EXPECT_EQ(bad_id.exit_code, 1) << bad_id.err;

    // Another user may ask nothing about root's dumps.
    temp_user other;
    auto refused_diff = run_heapctl(d, {"diff", older, newer}, &other);
    EXPECT_EQ(refused_diff.exit_code, 4) << refused_diff.out << refused_diff.err;
    auto refused_path = run_heapctl(d, {"path", newer, id}, &other);
    EXPECT_EQ(refused_path.exit_code, 4) << refused_path.out << refused_path.err;
    auto not_theirs = run_heapctl(d, {"diff", pid}, &other);
    EXPECT_EQ(not_theirs.exit_code, 5) << not_theirs.out << not_theirs.err;
}

TEST(query_requests, a_path_needs_a_kept_dump) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    // A file analyzed in place: its report is kept, the dump is not.
    const std::string file = std::string(HEAPD_PEER_DATA) + "/hprof-64.bin";
    ASSERT_TRUE(std::filesystem::exists(file)) << file;
    auto analyzed = run_heapctl(d, {"report", file, "--json"});
    ASSERT_EQ(analyzed.exit_code, 0) << analyzed.err;
    const std::string entry = json::parse(run_heapctl(d, {"dumps", "--json"}).out).at(0)["id"];
    auto path = run_heapctl(d, {"path", entry, "0x1"});
    EXPECT_EQ(path.exit_code, 5) << path.out << path.err;
    EXPECT_NE(path.err.find("keeps no dump file"), std::string::npos) << path.err;
    auto nothing = run_heapctl(d, {"diff", "no-such-dump", entry});
    EXPECT_EQ(nothing.exit_code, 5) << nothing.err;
}

}  // namespace
}  // namespace heapd::test
