// The daemon fed crafted agent answers by a local user who serves their own JVM's attach socket
// and answers heapd's agent commands themselves: an answer of about 430 KB whose names would expand
// to gigabytes if every row's frames were spelled out, with a class name that carries a forged log
// line and a right-to-left override. The daemon's memory must stay where it was, and what heapctl
// prints must keep each name on its line, escaped.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <string>

#include "formats/wire/protocol.h"
#include "support/hostile_user.h"
#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

// A class name that would print a line of its own, reversed text, and 256 KiB more.
const std::string forged_class =
    "com.secA.X\nheapd[868] info: FORGED LOG LINE\xE2\x80\xAE"
    "gpj.exe" +
    std::string(256 * 1024, 'A');

// 64 methods of 4 KiB names; the allocation answer: 200 sites of 64 frames of that class.
std::string methods_json() {
    std::string out;
    for (int m = 0; m < 64; ++m)
        out += std::string(m == 0 ? "" : ",") + R"({"class":"Lcom/secA/)" + std::string(4096, 'K') + R"(;","name":")" +
               std::string(4096, 'n') + R"(","descriptor":"()V","file":"F.java"})";
    return out;
}

std::string frames_json(int line) {
    std::string out;
    for (int f = 0; f < 64; ++f)
        out += std::string(f == 0 ? "" : ",") + "[" + std::to_string(f) + "," + std::to_string(line) + "]";
    return out;
}

std::string head(const char* command) {
    return std::string(R"({"protocol":1,"agent":"0.1.0","command":")") + command +
           R"(","error":"","sampling":true,"interval":1,"depth":64,"seconds":1,"dropped_ring":0,"memory_bytes":0)";
}

std::string sites_answer() {
    wire::json klass = forged_class;
    std::string out = head("show") + R"(,"samples":200,"dropped_sites":0,"dropped_live":0,"dropped_unnamed":0,)" +
                      R"("classes":[)" + klass.dump() + R"(],"methods":[)" + methods_json() + R"(],"sites":[)";
    for (int i = 0; i < 200; ++i)
        out += std::string(i == 0 ? "" : ",") + R"({"class":0,"frames":[)" + frames_json(i) +
               R"(],"samples":1,"live_samples":1,"objects":1,"bytes":)" + std::to_string(1000 + i) +
               R"(,"live_objects":1,"live_bytes":)" + std::to_string(1000 + i) + "}";
    return out + "]}";
}

std::string cpu_answer() {
    std::string out = head("cpu_show") + R"(,"cpu_sampling":true,"cpu_period_ms":10,"cpu_seconds":1,)" +
                      R"("cpu_depth":64,"cpu_ticks":200,"cpu_samples":200,"cpu_dropped":0,"cpu_methods":[)" +
                      methods_json() + R"(],"cpu_traces":[)";
    for (int t = 0; t < 200; ++t)
        out += std::string(t == 0 ? "" : ",") + R"({"frames":[)" + frames_json(t) + R"(],"count":)" +
               std::to_string(1 + t) + "}";
    return out + "]}";
}

// Resident memory of a process (VmRSS), in bytes.
std::uint64_t rss_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);)
        if (line.starts_with("VmRSS:")) return std::stoull(line.substr(6)) * 1024;
    return 0;
}

TEST(serve_attack, an_agent_answer_whose_names_expand_leaves_the_daemons_memory_where_it_was) {
    temp_user attacker;
    ASSERT_TRUE(attacker.ok());
    shared_dir answers;
    const std::string detail = answers.file("answer");
    { std::ofstream(detail + ".sites") << sites_answer(); }
    { std::ofstream(detail + ".cpu") << cpu_answer(); }
    std::cout << "answers: " << sites_answer().size() << " and " << cpu_answer().size() << " bytes\n";
    hostile_jvm target(attacker, hostile_act::fake_agent, detail);
    ASSERT_TRUE(target.ok());
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    // The daemon as it serves, once it has answered something.
    ASSERT_EQ(run_heapctl(d, {"status"}).exit_code, 0);
    const std::uint64_t baseline = peak_rss(d.pid());
    const std::string pid = std::to_string(target.jvm.pid());

    auto sites = run_heapctl(d, {"sites", pid, "--show", "--depth", "64", "--top", "1"}, &attacker);
    EXPECT_EQ(sites.exit_code, 0) << sites.err << d.log().substr(0, 4000);
    const std::uint64_t after_sites = peak_rss(d.pid());
    auto cpu = run_heapctl(d, {"cpu", pid, "--show", "--depth", "64", "--top", "1"}, &attacker);
    EXPECT_EQ(cpu.exit_code, 0) << cpu.err;
    const std::uint64_t after_cpu = peak_rss(d.pid());
    auto all = run_heapctl(d, {"sites", pid, "--show", "--depth", "64", "--json"}, &attacker);
    EXPECT_EQ(all.exit_code, 0) << all.err;
    const std::uint64_t peak = peak_rss(d.pid());
    std::cout << "daemon peak RSS " << (baseline >> 10) << " KiB before, " << (after_sites >> 10)
              << " KiB after sites --top 1, " << (after_cpu >> 10) << " KiB after cpu --top 1, " << (peak >> 10)
              << " KiB after the whole table (now " << (rss_of(d.pid()) >> 10) << " KiB); outputs " << sites.out.size()
              << ", " << cpu.out.size() << ", " << all.out.size() << " bytes\n";
    // The attack (one row): a few MiB, the answer parsed; the whole table: what its bound holds.
    EXPECT_LT(after_cpu, baseline + (8u << 20));
    EXPECT_LT(peak, baseline + (32u << 20));
    // One row shown, its names cut; the whole table stops at its bound.
    EXPECT_LT(sites.out.size(), 512u << 10);
    EXPECT_LT(cpu.out.size(), 512u << 10);
    EXPECT_LT(all.out.size(), 16u << 20);
    EXPECT_TRUE(wire::json::parse(all.out).value("cut_at_size", false));
    // The forged line stays inside its row, escaped; the override is shown, not obeyed.
    for (const std::string& out : {sites.out, cpu.out}) {
        EXPECT_EQ(out.find("\nheapd[868]"), std::string::npos) << out.substr(0, 2000);
        EXPECT_EQ(out.find("\xE2\x80\xAE"), std::string::npos);
    }
    EXPECT_NE(sites.out.find("com.secA.X\\nheapd[868] info: FORGED LOG LINE\\u202egpj.exe"), std::string::npos)
        << sites.out.substr(0, 2000);
    EXPECT_EQ(d.log().find("\nheapd[868]"), std::string::npos);
    EXPECT_EQ(run_heapctl(d, {"status"}).exit_code, 0);
}

}  // namespace
}  // namespace heapd::test
