// The daemon fed hostile bytes by a local user (a user made for the test): a file of zeros after a
// valid header, a gzip bomb, and an attach listener answering with 64 MiB of output and forged log
// lines. Memory, the report, the job record and the log must stay bounded.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include "formats/wire/protocol.h"
#include "support/hostile_user.h"
#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

namespace fs = std::filesystem;
using wire::json;
using wire::reply_kind;

TEST(serve_attack, a_file_of_zeros_after_a_valid_header_gives_a_bounded_report) {
    temp_user attacker;
    ASSERT_TRUE(attacker.ok());
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    shared_dir files;
    const std::string zeros = files.file("zeros.hprof");
    {
        std::ofstream out(zeros, std::ios::binary);
        const char header[] = "JAVA PROFILE 1.0.2";
        out.write(header, sizeof header);  // with its NUL
        const char id_size_and_time[12] = {0, 0, 0, 8};
        out.write(id_size_and_time, sizeof id_size_and_time);
        std::string megabyte(1 << 20, '\0');
        for (int i = 0; i < 10; ++i) out << megabyte;  // 1.16 million empty records of tag 0
    }
    ASSERT_EQ(::chown(zeros.c_str(), attacker.uid(), attacker.gid()), 0);
    auto r = run_heapctl(d, {"report", "--json", zeros}, &attacker);
    ASSERT_EQ(r.exit_code, 2) << r.err;  // a damaged dump
    EXPECT_NE(r.err.find("more problems like these, not listed"), std::string::npos);
    EXPECT_LT(r.err.size(), 64u << 10);
    json report = json::parse(r.out);
    EXPECT_LE(report["problems"].size(), 100u);
    EXPECT_GT(report.value("problems_omitted", 0u), 1000000u);
    EXPECT_LT(r.out.size(), 1u << 20);
    std::uint64_t stored = 0;
    for (const auto& e : fs::recursive_directory_iterator(d.store() + "/entries"))
        if (e.path().filename() == "report.json") stored = std::max<std::uint64_t>(stored, e.file_size());
    EXPECT_LT(stored, 1u << 20);
    const std::uint64_t daemon_peak = peak_rss(d.pid());
    std::cout << "10 MiB of zeros: report " << r.out.size() << " bytes, daemon peak RSS " << (daemon_peak >> 20)
              << " MiB\n";
    EXPECT_LT(daemon_peak, std::uint64_t{256} << 20);
}

TEST(serve_attack, a_gzip_bomb_is_refused_once_it_outgrows_the_store_and_leaves_nothing) {
    temp_user attacker;
    ASSERT_TRUE(attacker.ok());
    shared_dir files;
    // Room for about 136 MB past a reserve of 64 MB.
    const std::string config = files.file("heapd.toml");
    std::ofstream(config) << "[daemon]\ndisk_reserve = \"64M\"\ndisk_reserve_percent = 0\n";
    serve_process d({"--config", config}, small_store_launcher("200m"));
    ASSERT_TRUE(d.ready()) << d.log();
    const std::string bomb = files.file("bomb.hprof.gz");
    auto made = run_command({"sh", "-c",
                             "{ printf 'JAVA PROFILE 1.0.2\\000\\000\\000\\000\\010'; head -c 8 /dev/zero; "
                             "head -c 1G /dev/zero; } | gzip -1 > " +
                                 bomb});
    ASSERT_EQ(made.exit_code, 0) << made.err;
    ASSERT_LT(fs::file_size(bomb), 8u << 20);
    ASSERT_EQ(::chown(bomb.c_str(), attacker.uid(), attacker.gid()), 0);
    auto r = run_heapctl(d, {"report", bomb}, &attacker);
    EXPECT_NE(r.exit_code, 0) << r.out;
    EXPECT_NE(r.err.find("inflates to more than"), std::string::npos) << r.err;
    // Nothing of it is left in the store's file system.
    auto df = run_command(
        {"nsenter", "--mount=/proc/" + std::to_string(d.pid()) + "/ns/mnt", "df", "-B1", "--output=used", d.store()});
    ASSERT_EQ(df.exit_code, 0) << df.err;
    const std::uint64_t used = std::stoull(df.out.substr(df.out.find('\n') + 1));
    EXPECT_LT(used, std::uint64_t{4} << 20) << df.out;
    EXPECT_EQ(run_heapctl(d, {"status"}).exit_code, 0);
}

TEST(serve_attack, an_attach_reply_flood_is_kept_bounded_and_cannot_forge_log_lines) {
    temp_user attacker;
    ASSERT_TRUE(attacker.ok());
    hostile_jvm target(attacker, hostile_act::flood);
    ASSERT_TRUE(target.ok());
    const isolated_jvm& jvm = target.jvm;
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    auto r = run_heapctl(d, {"dump", std::to_string(jvm.pid()), "--wait"}, &attacker);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_LT(r.err.size(), 16u << 10);
    auto jobs = run_heapctl(d, {"jobs", "--json"});
    ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
    EXPECT_LT(jobs.out.size(), 16u << 10);
    json list = json::parse(jobs.out);
    ASSERT_EQ(list.size(), 1u);
    const std::string error = list[0].value("error", "");
    EXPECT_NE(error.find("wrote no dump"), std::string::npos) << error.substr(0, 200);
    EXPECT_NE(error.find("more bytes)"), std::string::npos) << error.substr(0, 200);
    const std::string log = d.log();
    EXPECT_EQ(log.find("\n[2026-01-01 00:00:00.000] [heapd] [info] FORGED"), std::string::npos);
    EXPECT_LT(log.size(), 64u << 10);
    const std::uint64_t daemon_peak = peak_rss(d.pid());
    std::cout << "64 MiB attach reply: job error " << error.size() << " bytes, log " << log.size()
              << " bytes, daemon peak RSS " << (daemon_peak >> 20) << " MiB\n";
    EXPECT_LT(daemon_peak, std::uint64_t{128} << 20);
}

TEST(serve_attack, a_listener_that_hangs_up_is_not_said_to_refuse_ids_that_are_its_own) {
    // The daemon's attach child takes the JVM's ids: a connection closed without a status is not
    // their fault (HotSpot's reason for peers of other ids), and the error says so.
    temp_user owner;
    ASSERT_TRUE(owner.ok());
    hostile_jvm target(owner, hostile_act::hang_up);
    ASSERT_TRUE(target.ok());
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    auto r = run_heapctl(d, {"dump", std::to_string(target.jvm.pid()), "--wait"}, &owner);
    EXPECT_NE(r.exit_code, 0) << r.out;
    EXPECT_NE(r.err.find("closed the connection without a status"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("the JVM may be exiting, or did not take the request"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("euid"), std::string::npos) << r.err;
}

TEST(serve_attack, an_analysis_beyond_its_memory_limit_fails_with_the_reason_and_the_daemon_serves_on) {
    shared_dir conf;
    const std::string config = conf.file("heapd.toml");
    { std::ofstream(config) << "[daemon]\nanalysis_memory = \"16M\"\n"; }
    serve_process d({"--config", config});
    ASSERT_TRUE(d.ready()) << d.log();
    // 3 million objects: with the big arrays spilled, the rest still needs more than 16 MiB (it
    // fits in 32 MiB since pass 1 of the graph reserves its arrays instead of growing them).
    auto r = run_heapctl(d, {"report", "--top", "1", big_dump()});
    EXPECT_NE(r.exit_code, 0) << r.out;
    EXPECT_NE(r.err.find("daemon.analysis_memory"), std::string::npos) << r.err;
    // A small dump fits.
    EXPECT_EQ(run_heapctl(d, {"report", "--top", "1", std::string(HEAPD_PEER_DATA) + "/hprof-32.bin"}).exit_code, 0)
        << d.log();
    EXPECT_EQ(run_heapctl(d, {"status"}).exit_code, 0);
}

// A memory cgroup of its own (v1 or v2, whichever the host has), removed on destruction: what
// systemd's MemoryMax= makes of the service.
class memory_cgroup {
public:
    explicit memory_cgroup(const std::string& limit) {
        const std::string name = "heapd-test-" + std::to_string(::getpid());
        for (auto [dir, file] : {std::pair{"/sys/fs/cgroup/memory/", "memory.limit_in_bytes"},
                                 {"/sys/fs/cgroup/unified/", "memory.max"},
                                 {"/sys/fs/cgroup/", "memory.max"}}) {
            std::error_code ec;
            if (!fs::create_directory(dir + name, ec)) continue;
            if ((std::ofstream(dir + name + "/" + file) << limit).flush()) {
                path_ = dir + name;
                return;
            }
            fs::remove(dir + name, ec);
        }
    }
    ~memory_cgroup() {
        if (path_.empty()) return;
        for (int i = 0; i < 50 && ::rmdir(path_.c_str()) != 0; ++i) ::usleep(100000);  // its processes end first
    }
    memory_cgroup(const memory_cgroup&) = delete;
    memory_cgroup& operator=(const memory_cgroup&) = delete;
    bool ok() const { return !path_.empty(); }
    // A launcher that moves the process into the group, then runs the rest of its arguments.
    std::vector<std::string> launcher() const {
        return {"sh", "-c", "echo $$ > \"$0\" && exec \"$@\"", path_ + "/cgroup.procs"};
    }

private:
    std::string path_;
};

// The daemon in a memory cgroup of 128 MiB, with no limit of its own configured, analyses a dump
// whose object graph and dominator tree alone need more than that: its analysis process sees how
// little the cgroup leaves and keeps those arrays in a file of the store's scratch directory, and
// the report is the one an unlimited analysis makes.
TEST(serve_attack, an_analysis_bigger_than_the_services_memory_cgroup_spills_and_completes) {
    shared_dir dir;
    const std::string file = dir.file("big.hprof");
    ASSERT_TRUE(write_big_dump(file, 2'000'000));  // 134 MB: about 4 million objects
    auto expected = run_command({heapd_binary(), "analyze", "--json", "--no-index", file});
    ASSERT_EQ(expected.exit_code, 0) << expected.err;
    EXPECT_EQ(expected.err.find("kept in a file"), std::string::npos) << expected.err;
    memory_cgroup group("128M");
    if (!group.ok()) GTEST_SKIP() << "no memory cgroup can be made here";
    {
        serve_process d({}, group.launcher());
        ASSERT_TRUE(d.ready()) << d.log();
        auto r = run_heapctl(d, {"report", "--json", file});
        ASSERT_EQ(r.exit_code, 0) << r.err << d.log();
        const json got = json::parse(r.out), want = json::parse(expected.out);
        for (const char* part : {"histogram", "reachability", "leak_suspects", "dominators", "retained_by_class"})
            EXPECT_EQ(got.value(part, json()), want.at(part)) << part;
        EXPECT_FALSE(has_temp_files(d.store()));
    }
}

}  // namespace
}  // namespace heapd::test
