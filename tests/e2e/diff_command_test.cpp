// heapd diff against a real JVM that leaks on demand (tests/java/Leaky.java): between two dumps it
// adds exactly N objects of one class, and the diff must name that class first with +N instances.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/jvm_process.h"

namespace heapd::test {
namespace {

constexpr int leak_count = 10000;

const nlohmann::json* row(const nlohmann::json& list, const std::string& name) {
    for (const auto& e : list)
        if (e.at("class") == name) return &e;
    return nullptr;
}

// Two dumps of Leaky, the second after one more leak: before.hprof and after.hprof.gz.
class diff_command_leaky_jvm : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new scratch_dir;
        demo_jvm jvm(java_main{"Leaky"}, {"-Xmx256m", "-Xshare:off"},
                     {dir_->file("trigger"), std::to_string(leak_count)});
        ASSERT_TRUE(jvm.ready());
        // One batch before the first dump, so the class is there in both and its growth is +100%.
        ASSERT_TRUE(leaky_grow(dir_->file("trigger")));
        ASSERT_EQ(jvm.jcmd({"GC.heap_dump", dir_->file("before.hprof")}).exit_code, 0);
        ASSERT_TRUE(leaky_grow(dir_->file("trigger")));
        ASSERT_EQ(jvm.jcmd({"GC.heap_dump", "-gz=1", dir_->file("after.hprof.gz")}).exit_code, 0);
    }
    static void TearDownTestSuite() {
        delete dir_;
        dir_ = nullptr;
    }
    static command_result diff(std::vector<std::string> extra) {
        std::vector<std::string> argv = {
            heapd_binary(),  "diff",      dir_->file("before.hprof"), dir_->file("after.hprof.gz"),
            "--inflate-dir", dir_->path()};
        argv.insert(argv.end(), extra.begin(), extra.end());
        return run_command(argv);
    }
    static scratch_dir* dir_;
};

scratch_dir* diff_command_leaky_jvm::dir_ = nullptr;

TEST_F(diff_command_leaky_jvm, the_leaking_class_grew_by_exactly_the_objects_added_and_comes_first) {
    auto r = diff({"--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("retained"), true);
    EXPECT_TRUE(j.at("notes").empty()) << j.at("notes").dump();
    const auto& grew = j.at("grew");
    ASSERT_FALSE(grew.empty());
    // First: its shallow growth (10,000 objects of 32 bytes) is far above anything else that
    // changes between the dumps, the list's backing array included (4 bytes a reference).
    const auto& top = grew.at(0);
    EXPECT_EQ(top.at("class"), "Leaky") << grew.dump(1);
    EXPECT_EQ(top.at("status"), "changed");
    EXPECT_EQ(top.at("instances_before"), leak_count);
    EXPECT_EQ(top.at("instances_after"), 2 * leak_count);
    EXPECT_EQ(top.at("instances_delta"), leak_count);
    EXPECT_EQ(top.at("shallow_bytes_delta"), top.at("shallow_bytes_before"));
    EXPECT_GT(top.at("retained_bytes_delta").get<std::int64_t>(), 0);
    EXPECT_EQ(top.at("retained_bytes_delta"), top.at("shallow_bytes_delta"));  // a Leaky holds nothing else
    // The list's array holds every Leaky: its retained growth covers theirs.
    const auto* array = row(grew, "java.lang.Object[]");
    ASSERT_NE(array, nullptr);
    EXPECT_GE(array->at("retained_bytes_delta").get<std::int64_t>(),
              top.at("retained_bytes_delta").get<std::int64_t>());
    // Both heaps' totals: the heap grew by at least the leaked bytes.
    auto bytes = [](const nlohmann::json& side, const char* key) { return side.at(key).get<std::int64_t>(); };
    EXPECT_GE(bytes(j.at("after"), "shallow_bytes") - bytes(j.at("before"), "shallow_bytes"),
              top.at("shallow_bytes_delta").get<std::int64_t>());
    EXPECT_GE(bytes(j.at("after"), "reachable_bytes") - bytes(j.at("before"), "reachable_bytes"),
              top.at("retained_bytes_delta").get<std::int64_t>());
    EXPECT_GE(bytes(j.at("after"), "objects") - bytes(j.at("before"), "objects"), leak_count);
    EXPECT_EQ(j.at("grew_classes").get<std::size_t>(), grew.size());  // no --top: every class
}

TEST_F(diff_command_leaky_jvm, the_text_headline_names_the_leaking_class) {
    auto r = diff({});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("\nGrew most: Leaky\n  +10,000 instances (+100.0%), "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\n  Before   "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\n  Change   heap +"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\n     1      +10,000       20,000 "), std::string::npos) << r.out;
}

TEST_F(diff_command_leaky_jvm, top_cuts_the_lists_and_no_retained_compares_shallow_sizes_only) {
    auto r = diff({"--json", "--top", "1", "--no-retained"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("retained"), false);
    ASSERT_EQ(j.at("grew").size(), 1u);
    EXPECT_LE(j.at("shrank").size(), 1u);
    EXPECT_GE(j.at("grew_classes").get<std::size_t>(), 1u);
    EXPECT_EQ(j.at("grew").at(0).at("class"), "Leaky");
    EXPECT_EQ(j.at("grew").at(0).at("instances_delta"), leak_count);
    EXPECT_FALSE(j.at("grew").at(0).contains("retained_bytes_delta"));
    EXPECT_FALSE(j.at("after").contains("reachable_bytes"));
    // Swapped, the same leak reads as shrinkage, and the timestamps say the order is backwards.
    auto back = run_command({heapd_binary(), "diff", "--json", "--no-retained", "--inflate-dir", dir_->path(),
                             dir_->file("after.hprof.gz"), dir_->file("before.hprof")});
    ASSERT_EQ(back.exit_code, 0) << back.err;
    auto b = nlohmann::json::parse(back.out);
    const auto* leaky = row(b.at("shrank"), "Leaky");
    ASSERT_NE(leaky, nullptr) << b.at("shrank").dump(1);
    EXPECT_EQ(leaky->at("instances_delta"), -leak_count);
    EXPECT_EQ(b.at("shrank").at(0).at("class"), "Leaky");
    ASSERT_FALSE(b.at("notes").empty());
    EXPECT_NE(b.at("notes").at(0).get<std::string>().find("taken before"), std::string::npos) << b.at("notes");
}

// The two dumps in one file, as the old hprof agent writes a file it dumps into twice: the first
// dump whole, then the second's records after its file header (JAVA PROFILE 1.0.2, ids, time).
TEST_F(diff_command_leaky_jvm, two_heap_dumps_in_one_file_are_analyzed_and_diffed_one_by_one) {
    const std::string before = dir_->file("before.hprof"), after = dir_->file("after-plain.hprof"),
                      both = dir_->file("both.hprof");
    auto inflated = run_command({"gzip", "-dc", dir_->file("after.hprof.gz")});
    ASSERT_EQ(inflated.exit_code, 0) << inflated.err;
    { std::ofstream(after, std::ios::binary) << inflated.out; }
    constexpr std::size_t header = 19 + 4 + 8;
    ASSERT_EQ(inflated.out.substr(0, 19), std::string("JAVA PROFILE 1.0.2\0", 19));
    {
        std::ofstream out(both, std::ios::binary);
        out << std::ifstream(before, std::ios::binary).rdbuf();
        out << inflated.out.substr(header);
    }
    auto analyze = [](std::vector<std::string> args) {
        args.insert(args.begin(), {heapd_binary(), "analyze", "--json", "--no-index", "--top", "0"});
        auto r = run_command(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
    };
    const nlohmann::json first = analyze({both, "--dump", "1"}), last = analyze({both}),
                         alone_before = analyze({before}), alone_after = analyze({after});
    EXPECT_EQ(first.at("summary").at("heap_dumps"), 2);
    EXPECT_EQ(first.at("summary").at("dump_number"), 1);
    EXPECT_EQ(last.at("summary").at("dump_number"), 2);
    EXPECT_EQ(alone_before.at("summary").at("heap_dumps"), 1);
    // Each dump of the file reads as it did alone: not merged, not mixed.
    for (const char* part : {"histogram", "leak_suspects", "dominators", "retained_by_class", "threads", "waste"}) {
        EXPECT_EQ(first.at(part), alone_before.at(part)) << part;
        EXPECT_EQ(last.at(part), alone_after.at(part)) << part;
    }
    EXPECT_EQ(last.at("reachability"), alone_after.at("reachability"));
    auto text = run_command({heapd_binary(), "analyze", "--no-index", both});
    EXPECT_NE(text.out.find(
                  "  Dumps    this file holds 2 heap dumps: this is dump 2 (heapd analyze --dump N picks another)\n"),
              std::string::npos)
        << text.out;
    auto none = run_command({heapd_binary(), "analyze", "--no-index", both, "--dump", "3"});
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_NE(none.err.find("there is no heap dump 3 in this file: it holds 2"), std::string::npos) << none.err;

    // heapd path --dump N finds paths in that dump: the first dump's biggest retainer, as alone.
    ASSERT_FALSE(first.at("dominators").empty());
    const std::string id = std::to_string(first.at("dominators").at(0).at("id").get<std::uint64_t>());
    auto path_in = [&](std::vector<std::string> args) {
        args.insert(args.begin(), {heapd_binary(), "path", "--json", "--roots", "3"});
        auto r = run_command(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        auto j = r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
        j.erase("file");
        return j;
    };
    const nlohmann::json path_first = path_in({both, id, "--dump", "1"});
    EXPECT_EQ(path_first, path_in({before, id}));
    EXPECT_FALSE(path_first.at("paths").empty());
    auto no_path = run_command({heapd_binary(), "path", both, id, "--dump", "3"});
    EXPECT_EQ(no_path.exit_code, 2);
    EXPECT_NE(no_path.err.find("there is no heap dump 3 in this file: it holds 2"), std::string::npos) << no_path.err;

    // FILE:N names one dump of a file: the diff is the one of the two files.
    auto in_one = run_command({heapd_binary(), "diff", "--json", both + ":1", both + ":2"});
    auto in_two = run_command({heapd_binary(), "diff", "--json", before, after});
    ASSERT_EQ(in_one.exit_code, 0) << in_one.err;
    ASSERT_EQ(in_two.exit_code, 0) << in_two.err;
    const auto one = nlohmann::json::parse(in_one.out), two = nlohmann::json::parse(in_two.out);
    EXPECT_EQ(one.at("grew"), two.at("grew"));
    EXPECT_EQ(one.at("shrank"), two.at("shrank"));
    EXPECT_EQ(one.at("grew").at(0).at("class"), "Leaky");
    EXPECT_EQ(one.at("grew").at(0).at("instances_delta"), leak_count);
}

TEST(diff_command, usage_errors_exit_1) {
    EXPECT_EQ(run_command({heapd_binary(), "diff"}).exit_code, 1);
    EXPECT_EQ(run_command({heapd_binary(), "diff", "one.hprof"}).exit_code, 1);
    EXPECT_EQ(run_command({heapd_binary(), "diff", "a", "b", "c"}).exit_code, 1);
    EXPECT_EQ(run_command({heapd_binary(), "diff", "--top", "x", "a", "b"}).exit_code, 1);
    EXPECT_EQ(run_command({heapd_binary(), "diff", "--no-such-option", "a", "b"}).exit_code, 1);
}

TEST(diff_command, missing_or_invalid_files_exit_2_with_the_reason) {
    scratch_dir dir;
    std::ofstream(dir.file("text.hprof")) << "not a heap dump\n";
    auto missing_old = run_command({heapd_binary(), "diff", dir.file("missing.hprof"), dir.file("text.hprof")});
    EXPECT_EQ(missing_old.exit_code, 2);
    EXPECT_NE(missing_old.err.find("No such file"), std::string::npos) << missing_old.err;
    EXPECT_TRUE(missing_old.out.empty());
    auto missing_new = run_command({heapd_binary(), "diff", dir.file("text.hprof"), dir.file("missing.hprof")});
    EXPECT_EQ(missing_new.exit_code, 2);
    EXPECT_NE(missing_new.err.find("missing.hprof"), std::string::npos) << missing_new.err;
    EXPECT_NE(missing_new.err.find("No such file"), std::string::npos) << missing_new.err;
    auto text = run_command({heapd_binary(), "diff", dir.file("text.hprof"), dir.file("text.hprof")});
    EXPECT_EQ(text.exit_code, 2);
    EXPECT_NE(text.err.find("not an HPROF file"), std::string::npos) << text.err;
    EXPECT_TRUE(text.out.empty());
}

}  // namespace
}  // namespace heapd::test
