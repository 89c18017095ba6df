// Reading the agent's answer: what it holds, and every way a hostile JVM could make it wrong.
#include "formats/sites/allocation_profile.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

namespace heapd::sites {
namespace {

nlohmann::json answer() {
    return nlohmann::json::parse(R"({"protocol":1,"agent":"0.1.0","command":"show","error":"","sampling":true,
        "interval":524288,"depth":16,"seconds":2.5,"dropped_ring":3,"memory_bytes":1000,"samples":7,
        "dropped_sites":1,"dropped_live":2,"dropped_unnamed":0,
        "classes":["[B","Ljava/util/HashMap$Node;","[[Ljava/lang/Object;"],
        "methods":[{"class":"LApp;","name":"keep","descriptor":"()V","file":"App.java"},
                   {"class":"Ljava/util/HashMap;","name":"put","descriptor":"(Ljava/lang/Object;)V","file":""}],
        "sites":[{"class":0,"frames":[[0,12],[1,-1]],"samples":5,"objects":5.5,"bytes":5767168.0,
                  "live_samples":4,"live_objects":4.4,"live_bytes":4613734.4},
                 {"class":1,"frames":[[1,-2]],"samples":2,"objects":2048,"bytes":65536,
                  "live_samples":0,"live_objects":0,"live_bytes":0}]})");
}

TEST(allocation_profile, reads_an_answer_with_tables) {
    auto p = parse_allocation_profile(answer().dump());
    ASSERT_TRUE(p.has_value()) << p.error().describe();
    EXPECT_EQ(p->agent_version, "0.1.0");
    EXPECT_TRUE(p->sampling);
    EXPECT_EQ(p->interval, 524288);
    EXPECT_DOUBLE_EQ(p->seconds, 2.5);
    EXPECT_EQ(p->dropped_ring, 3u);
    EXPECT_TRUE(p->has_tables);
    ASSERT_EQ(p->classes.size(), 3u);
    EXPECT_EQ(p->classes[0], "byte[]");
    EXPECT_EQ(p->classes[1], "java.util.HashMap$Node");
    EXPECT_EQ(p->classes[2], "java.lang.Object[][]");
    ASSERT_EQ(p->methods.size(), 2u);
    EXPECT_EQ(p->methods[0].klass, "App");
    ASSERT_EQ(p->sites.size(), 2u);
    EXPECT_EQ(p->sites[0].frames.size(), 2u);
    EXPECT_EQ(p->sites[0].frames[1].line, -1);
    EXPECT_DOUBLE_EQ(p->sites[0].live_bytes, 4613734.4);
}

TEST(allocation_profile, reads_an_answer_without_tables_and_a_refusal) {
    nlohmann::json j = answer();
    for (const char* key :
         {"samples", "dropped_sites", "dropped_live", "dropped_unnamed", "classes", "methods", "sites"})
        j.erase(key);
    j["error"] = "not sampling";
    auto p = parse_allocation_profile(j.dump());
    ASSERT_TRUE(p.has_value()) << p.error().describe();
    EXPECT_FALSE(p->has_tables);
    EXPECT_EQ(p->error, "not sampling");
}

// Each change makes the answer unreadable, with a message naming what is wrong.
TEST(allocation_profile, refuses_answers_that_are_wrong) {
    struct change {
        std::function<void(nlohmann::json&)> apply;
        std::string says;
    };
    const std::vector<change> changes = {
        {[](auto& j) { j.erase("interval"); }, "no \"interval\""},
        {[](auto& j) { j["sampling"] = 1; }, "\"sampling\""},
        {[](auto& j) { j["sites"][0]["class"] = 3; }, "class 3 is not listed"},
        {[](auto& j) {
             j["sites"][0]["frames"][0] = {2, 1};
         },
         "method 2 is not listed"},
        {[](auto& j) {
             j["sites"][0]["frames"][0] = {0, -3};
         },
         "line -3"},
        {[](auto& j) { j["sites"][0]["frames"][0] = {0}; }, "[method, line]"},
        {[](auto& j) { j["sites"][0]["bytes"] = -1.0; }, "\"bytes\" is not a non-negative number"},
        {[](auto& j) { j["sites"][0]["samples"] = -1; }, "\"samples\" is not a count"},
        {[](auto& j) { j["methods"][0]["name"] = 7; }, "\"name\" is not a string"},
        {[](auto& j) {
             for (std::size_t i = 0; i <= max_frames; ++i) j["sites"][0]["frames"].push_back({0, 1});
         },
         "more than 64"},
    };
    for (const change& c : changes) {
        nlohmann::json j = answer();
        c.apply(j);
        auto p = parse_allocation_profile(j.dump());
        ASSERT_FALSE(p.has_value()) << j.dump();
        EXPECT_EQ(p.error().code, error_code::bad_value);
        EXPECT_NE(p.error().message.find(c.says), std::string::npos) << p.error().message;
    }
    nlohmann::json j = answer();
    j["protocol"] = 2;
    auto other = parse_allocation_profile(j.dump());
    ASSERT_FALSE(other.has_value());
    EXPECT_EQ(other.error().code, error_code::protocol);
    EXPECT_FALSE(parse_allocation_profile("{\"protocol\":").has_value());
    EXPECT_FALSE(parse_allocation_profile("[]").has_value());
    EXPECT_FALSE(parse_allocation_profile(std::string(max_answer_bytes + 1, ' ')).has_value());
}

// The peak resident memory of this process (VmHWM), in bytes.
std::uint64_t peak_resident() {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
        if (line.starts_with("VmHWM:")) return std::stoull(line.substr(6)) * 1024;
    return 0;
}

// An answer as dense as the bounds allow (65,536 sites of 64 frames, 28 MB) is read without a JSON
// document: what it costs is about the frames kept (8 bytes each, 32 MiB), not ten times its text.
// Measured in a child process, whose peak is its own.
TEST(allocation_profile, a_dense_answer_costs_what_its_tables_keep) {
    std::string answer =
        R"({"protocol":1,"agent":"x","command":"show","error":"","sampling":true,"interval":1,)"
        R"("depth":64,"seconds":1,"dropped_ring":0,"memory_bytes":0,"samples":1,"dropped_sites":0,)"
        R"("dropped_live":0,"dropped_unnamed":0,"classes":["[B"],"methods":[{"class":"LA;","name":"m",)"
        R"("descriptor":"()V","file":"A.java"}],"sites":[)";
    std::string frames;
    for (int f = 0; f < 64; ++f) frames += std::string(f == 0 ? "" : ",") + "[0,1]";
    const std::string site = R"({"class":0,"frames":[)" + frames +
                             R"(],"samples":1,"live_samples":1,"objects":1,"bytes":1,"live_objects":1,"live_bytes":1})";
    answer.reserve(answer.size() + max_entries * (site.size() + 1) + 2);
    for (std::size_t i = 0; i < max_entries; ++i) answer += (i == 0 ? "" : ",") + site;
    answer += "]}";
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0);
    const pid_t child = ::fork();
    if (child == 0) {
        const std::uint64_t before = peak_resident();
        auto p = parse_allocation_profile(answer);
        const std::uint64_t after = peak_resident();
        const std::string report = std::to_string(p ? p->sites.size() : 0) + " " + std::to_string(after - before);
        (void)!::write(pipe_fds[1], report.data(), report.size());
        ::_exit(0);
    }
    ::close(pipe_fds[1]);
    char buffer[64] = {};
    (void)!::read(pipe_fds[0], buffer, sizeof buffer - 1);
    ::close(pipe_fds[0]);
    ::waitpid(child, nullptr, 0);
    std::size_t sites = 0;
    std::uint64_t grew = 0;
    ASSERT_EQ(std::sscanf(buffer, "%zu %" SCNu64, &sites, &grew), 2) << buffer;
    std::cout << "answer " << answer.size() << " bytes: " << sites << " sites, peak grew " << (grew >> 20) << " MiB\n";
    EXPECT_EQ(sites, max_entries);
    EXPECT_LT(grew, std::uint64_t{64} << 20);
}

}  // namespace
}  // namespace heapd::sites
