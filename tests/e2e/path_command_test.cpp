// heapd path and the leak suspects of heapd analyze on a real JVM leaking sessions into a static
// list (tests/java/Sessions.java): the suspect names the list and the path to it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "support/jvm_process.h"

namespace heapd::test {
namespace {

// A dump of Sessions holding 20,000 sessions of 1,000-byte payloads, taken once for all tests.
class sessions_dump : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new scratch_dir;
        demo_jvm jvm(java_main{"Sessions"}, {"-Xmx256m", "-XX:+UseSerialGC"}, {"20000"});
        ASSERT_TRUE(jvm.ready());
        auto r = jvm.jcmd({"GC.heap_dump", dir_->file("sessions.hprof")});
        ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    }
    static void TearDownTestSuite() {
        delete dir_;
        dir_ = nullptr;
    }
    static std::string dump() { return dir_->file("sessions.hprof"); }
    static nlohmann::json run_json(const std::vector<std::string>& args) {
        std::vector<std::string> argv = {heapd_binary()};
        argv.insert(argv.end(), args.begin(), args.end());
        auto r = run_command(argv);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return nlohmann::json::parse(r.out);
    }
    static inline scratch_dir* dir_ = nullptr;
};

TEST_F(sessions_dump, the_leak_suspect_names_the_static_list_and_the_path_to_it) {
    auto report = run_json({"analyze", "--json", "--no-threads", dump()});
    const auto& suspects = report.at("leak_suspects").at("suspects");
    ASSERT_FALSE(suspects.empty());
    const auto& s = suspects[0];
    EXPECT_EQ(s.at("kind"), "object");
    EXPECT_EQ(s.at("object").at("class"), "java.util.ArrayList");
    EXPECT_GT(s.at("share").get<double>(), 0.5);
    const auto& acc = s.at("accumulation_point");
    EXPECT_EQ(acc.at("class"), "java.lang.Object[]");
    ASSERT_FALSE(s.at("accumulated").empty());
    EXPECT_EQ(s.at("accumulated")[0].at("class"), "Sessions$Session");
    EXPECT_EQ(s.at("accumulated")[0].at("count"), 20000);
    std::string path = s.at("path").at("text");
    EXPECT_NE(
        path.find("class Sessions (static LEAK) \u2192 java.util.ArrayList.elementData \u2192 java.lang.Object[]"),
        std::string::npos)
        << path;
    const auto& steps = s.at("path").at("steps");
    ASSERT_GE(steps.size(), 3u);
    EXPECT_EQ(steps[steps.size() - 1].at("id"), acc.at("id"));
    EXPECT_EQ(steps[steps.size() - 2].at("id"), s.at("object").at("id"));

    auto text = run_command({heapd_binary(), "analyze", "--no-threads", dump()});
    EXPECT_NE(text.out.find("retained by one java.util.ArrayList"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("20,000 Sessions$Session"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("class Sessions (static LEAK)"), std::string::npos) << text.out;
}

TEST_F(sessions_dump, path_gives_shortest_paths_from_different_roots) {
    auto report = run_json({"analyze", "--json", "--no-threads", dump()});
    std::uint64_t array = report.at("leak_suspects").at("suspects")[0].at("accumulation_point").at("id");
    auto p = run_json({"path", "--json", "--roots", "3", dump(), std::to_string(array)});
    EXPECT_EQ(p.at("id"), array);
    EXPECT_EQ(p.at("class"), "java.lang.Object[]");
    EXPECT_TRUE(p.at("reachable").get<bool>());
    const auto& paths = p.at("paths");
    ASSERT_EQ(paths.size(), 3u);
    std::set<std::uint64_t> roots;
    std::uint64_t last_length = 0;
    for (const auto& path : paths) {
        const auto& steps = path.at("steps");
        roots.insert(steps[0].at("id").get<std::uint64_t>());
        EXPECT_EQ(steps.back().at("id"), array);
        EXPECT_FALSE(path.at("root_kinds").empty());
        EXPECT_GE(path.at("length").get<std::uint64_t>(), last_length);
        last_length = path.at("length");
        EXPECT_NE(path.at("text").get<std::string>().find("class Sessions (static LEAK)"), std::string::npos);
    }
    EXPECT_EQ(roots.size(), 3u);  // three different roots

    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(array));
    auto text = run_command({heapd_binary(), "path", dump(), hex});
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("java.util.ArrayList.elementData \u2192 java.lang.Object[]"), std::string::npos)
        << text.out;
}

TEST_F(sessions_dump, path_refuses_bad_ids) {
    EXPECT_EQ(run_command({heapd_binary(), "path", dump(), "0x12zz"}).exit_code, 1);
    auto missing = run_command({heapd_binary(), "path", dump(), "0x8"});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("no object 0x8"), std::string::npos) << missing.err;
    EXPECT_EQ(run_command({heapd_binary(), "path", dir_->file("absent.hprof"), "0x8"}).exit_code, 2);
}

}  // namespace
}  // namespace heapd::test
