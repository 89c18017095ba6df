// `heapd serve` with analyses running: the socket answers meanwhile, a client that goes away stops
// nothing, jobs cancel, a daemon killed during an analysis restarts clean, a full disk is refused.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using wire::error_kind;
using wire::json;
using wire::reply_kind;

const std::string peer_dump = std::string(HEAPD_PEER_DATA) + "/hprof-64.bin";

// The record of job id as the daemon lists it (json null when absent).
json job_of(const serve_process& d, std::uint64_t id) {
    raw_client c(d.socket());
    if (!c.send_request({1, "jobs", json::object()})) return nullptr;
    auto r = c.read_reply();
    if (!r || r->kind != reply_kind::result) return nullptr;
    for (const json& j : r->result["jobs"])
        if (j["id"] == id) return j;
    return nullptr;
}

// Waits (up to 120 s) until job id has state.
bool wait_for_state(const serve_process& d, std::uint64_t id, const std::string& state) {
    for (int i = 0; i < 12000; ++i) {
        json j = job_of(d, id);
        if (!j.is_null() && j["state"] == state) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

int analysis_processes(const std::string& store) { return static_cast<int>(analysis_processes_of(store).size()); }

TEST(serve_jobs, status_is_answered_while_a_large_analysis_runs) {
    const std::string dump = big_dump();
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    raw_client submitter(d.socket());
    const std::uint64_t job = queue_analysis(submitter, dump);
    ASSERT_NE(job, 0u) << d.log();
    // Ask for status again and again: replies come while the worker analyses.
    raw_client asker(d.socket());
    int answered_while_running = 0;
    for (int i = 0; i < 100000; ++i) {
        ASSERT_TRUE(asker.send_request({static_cast<std::uint64_t>(i + 1), "status", json::object()}));
        auto r = asker.read_reply(std::chrono::seconds(30));
        ASSERT_TRUE(r && r->kind == reply_kind::result) << "no status reply during the analysis";
        if (r->result["jobs"]["running"] == 1) ++answered_while_running;
        json j = job_of(d, job);
        if (j["state"] != "queued" && j["state"] != "running") break;
    }
    EXPECT_GT(answered_while_running, 0);
    ASSERT_TRUE(wait_for_state(d, job, "done")) << d.log();
}

// The Uid and CapEff lines of /proc/PID/status of the analysis processes working for store.
std::vector<std::string> analysis_credentials(const std::string& store) {
    std::vector<std::string> out;
    for (pid_t pid : analysis_processes_of(store)) {
        std::ifstream status("/proc/" + std::to_string(pid) + "/status");
        std::string ids;
        for (std::string line; std::getline(status, line);)
            if (line.starts_with("Uid:") || line.starts_with("CapEff:")) ids += line + "\n";
        if (!ids.empty()) out.push_back(ids);
    }
    return out;
}

TEST(serve_jobs, a_root_daemon_parses_a_clients_dump_as_nobody) {
    ASSERT_EQ(::geteuid(), 0u) << "the daemon must run as root for this test";
    const std::string dump = big_dump();
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    raw_client c(d.socket());
    const std::uint64_t job = queue_analysis(c, dump);
    ASSERT_NE(job, 0u) << d.log();
    // Once the dump is mapped the process is nobody (65534 on Debian), with no capability left.
    const std::string nobody = "Uid:\t65534\t65534\t65534\t65534\nCapEff:\t0000000000000000\n";
    int seen_as_nobody = 0, seen = 0;
    std::string last_state;
    for (int i = 0; i < 60000 && seen_as_nobody == 0; ++i) {
        for (const std::string& ids : analysis_credentials(d.store())) {
            ++seen;
            seen_as_nobody += ids == nobody;
        }
        // A record in a final state ends the watch; a reply that did not come (a busy machine) does not.
        const json j = job_of(d, job);
        last_state = j.is_object() ? j["state"].dump() : "no reply";
        if (j.is_object() && j["state"] != "running" && j["state"] != "queued") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_GT(seen_as_nobody, 0) << seen << " observations of the analysis process, none as nobody; the job "
                                 << last_state;
    ASSERT_TRUE(wait_for_state(d, job, "done")) << d.log();
}

TEST(serve_jobs, a_client_that_disconnects_mid_job_stops_nothing) {
    const std::string dump = big_dump();
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    std::uint64_t gone_job = 0;
    {
        raw_client leaving(d.socket());
        ASSERT_TRUE(start_analysis(leaving, dump, true));
        auto first = leaving.read_reply();
        ASSERT_TRUE(first && first->kind == reply_kind::progress);
        gone_job = first->progress.job;
    }  // gone while its job runs
    raw_client staying(d.socket());
    ASSERT_TRUE(start_analysis(staying, peer_dump, true, 2));
    std::optional<wire::reply> last;
    while ((last = staying.read_reply(std::chrono::seconds(120))) && last->kind == reply_kind::progress) {}
    ASSERT_TRUE(last && last->kind == reply_kind::result) << d.log();
    EXPECT_EQ(last->result["job"]["state"], "done");
    EXPECT_FALSE(last->result["report"]["histogram"].empty());
    ASSERT_TRUE(wait_for_state(d, gone_job, "done")) << d.log();
    auto dumps = raw_client(d.socket());
    ASSERT_TRUE(dumps.send_request({1, "dumps", json::object()}));
    EXPECT_EQ(dumps.read_reply()->result["dumps"].size(), 2u);
}

TEST(serve_jobs, a_cancelled_analysis_stops_and_keeps_nothing) {
    const std::string dump = big_dump();
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    raw_client waiting(d.socket());
    ASSERT_TRUE(start_analysis(waiting, dump, true));
    auto first = waiting.read_reply();
    ASSERT_TRUE(first && first->kind == reply_kind::progress);
    const std::uint64_t job = first->progress.job;
    raw_client canceller(d.socket());
    ASSERT_TRUE(canceller.send_request({1, "cancel", {{"job", job}}}));
    auto asked = canceller.read_reply();
    ASSERT_TRUE(asked && asked->kind == reply_kind::result) << (asked ? asked->error.message : "no reply");
    std::optional<wire::reply> last;
    while ((last = waiting.read_reply(std::chrono::seconds(120))) && last->kind == reply_kind::progress) {}
    ASSERT_TRUE(last.has_value());
    ASSERT_EQ(last->kind, reply_kind::error);
    EXPECT_EQ(last->error.kind, error_kind::cancelled) << last->error.message;
    EXPECT_EQ(job_of(d, job)["state"], "cancelled");
    EXPECT_TRUE(std::filesystem::is_empty(d.store() + "/entries"));
    EXPECT_FALSE(has_temp_files(d.store()));
    // A finished job cannot be cancelled again.
    ASSERT_TRUE(canceller.send_request({2, "cancel", {{"job", job}}}));
    EXPECT_EQ(canceller.read_reply()->error.kind, error_kind::bad_request);
}

TEST(serve_jobs, killed_during_an_analysis_it_restarts_clean_with_the_job_failed) {
    const std::string dump = big_dump();
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    // One finished report first: it must survive the crash.
    raw_client before(d.socket());
    ASSERT_TRUE(start_analysis(before, peer_dump, true));
    std::optional<wire::reply> r;
    while ((r = before.read_reply()) && r->kind == reply_kind::progress) {}
    ASSERT_TRUE(r && r->kind == reply_kind::result);
    const std::string kept = r->result["dump"]["id"];
    raw_client c(d.socket());
    ASSERT_TRUE(start_analysis(c, dump, true, 2));
    std::uint64_t job = 0;
    while ((r = c.read_reply()) && r->kind == reply_kind::progress) {
        job = r->progress.job;
        if (r->progress.phase == "object graph") break;  // well inside the analysis
    }
    ASSERT_TRUE(r && r->kind == reply_kind::progress) << "the analysis ended before it could be interrupted";
    EXPECT_EQ(d.stop(SIGKILL), 128 + SIGKILL);
    // Its analysis process dies with it.
    bool child_gone = false;
    for (int i = 0; i < 300 && !(child_gone = analysis_processes(d.store()) == 0); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE(child_gone);

    ASSERT_TRUE(d.start()) << d.log();
    json failed = job_of(d, job);
    ASSERT_FALSE(failed.is_null());
    EXPECT_EQ(failed["state"], "failed");
    EXPECT_NE(failed["error"].get<std::string>().find("interrupted"), std::string::npos);
    EXPECT_FALSE(has_temp_files(d.store()));
    EXPECT_NE(d.log().find("1 jobs were interrupted"), std::string::npos) << d.log();
    raw_client after(d.socket());
    ASSERT_TRUE(after.send_request({1, "dumps", json::object()}));
    auto dumps = after.read_reply();
    ASSERT_TRUE(dumps && dumps->kind == reply_kind::result);
    ASSERT_EQ(dumps->result["dumps"].size(), 1u);
    EXPECT_EQ(dumps->result["dumps"][0]["id"], kept);
    ASSERT_TRUE(after.send_request({2, "report", {{"dump", kept}}}));
    auto report = after.read_reply();
    ASSERT_TRUE(report && report->kind == reply_kind::result);
    EXPECT_FALSE(report->result["report"]["histogram"].empty());
    // Job ids go on after the interrupted one.
    ASSERT_TRUE(start_analysis(after, peer_dump, false, 3));
    auto next = after.read_reply();
    ASSERT_TRUE(next && next->kind == reply_kind::result);
    EXPECT_GT(next->result["job"]["id"].get<std::uint64_t>(), job);
}

TEST(serve_jobs, a_store_without_room_refuses_with_a_clear_error) {
    // The store on a 2 MiB tmpfs in a mount namespace of the daemon's own: it goes with the daemon.
    serve_process d({}, small_store_launcher("2m"));
    ASSERT_TRUE(d.ready()) << d.log();
    raw_client c(d.socket());
    ASSERT_TRUE(start_analysis(c, peer_dump, true));
    std::optional<wire::reply> r;
    while ((r = c.read_reply()) && r->kind == reply_kind::progress) {}
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->kind, reply_kind::error);
    EXPECT_EQ(r->error.kind, error_kind::no_space);
    EXPECT_NE(r->error.message.find("not enough free space in " + d.store()), std::string::npos) << r->error.message;
}

// The free space the store keeps is the configured one (daemon.disk_reserve and its share of the
// disk, the larger): on a 128 MiB store, none kept lets a 3 MiB dump's report in, all of the disk
// refuses it (by default the 1 GiB floor would refuse both).
TEST(serve_jobs, the_store_keeps_the_configured_share_of_its_disk_free) {
    scratch_dir dir;
    auto analysis_with = [&](const std::string& reserve, unsigned percent) {
        const std::string config = dir.file("heapd-" + std::to_string(percent) + ".toml");
        std::ofstream(config) << "[daemon]\ndisk_reserve = \"" << reserve << "\"\ndisk_reserve_percent = " << percent
                              << "\n";
        serve_process d({"--config", config}, small_store_launcher("128m"));
        if (!d.ready()) {
            ADD_FAILURE() << d.log();
            return std::optional<wire::reply>();
        }
        raw_client c(d.socket());
        if (!start_analysis(c, peer_dump, true)) return std::optional<wire::reply>();
        std::optional<wire::reply> r;
        while ((r = c.read_reply()) && r->kind == reply_kind::progress) {}
        return r;
    };
    auto none = analysis_with("0", 0);
    ASSERT_TRUE(none.has_value());
    EXPECT_EQ(none->kind, reply_kind::result) << none->error.message;
    auto most = analysis_with("1M", 100);
    ASSERT_TRUE(most.has_value());
    ASSERT_EQ(most->kind, reply_kind::error);
    EXPECT_EQ(most->error.kind, error_kind::no_space);
    EXPECT_NE(most->error.message.find("128 MiB kept in reserve"), std::string::npos) << most->error.message;
}

TEST(serve_jobs, a_file_cut_short_while_it_is_analyzed_fails_its_job_only) {
    // The file's owner may truncate it while the daemon reads it: the reads past its new end fault
    // (SIGBUS) in the process that maps it, which must not be the daemon.
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    const std::string mine = d.dir() + "/cut.hprof";
    std::filesystem::copy_file(big_dump(), mine);
    raw_client c(d.socket());
    ASSERT_TRUE(start_analysis(c, mine, true));
    std::optional<wire::reply> r;
    std::uint64_t job = 0;
    while ((r = c.read_reply()) && r->kind == reply_kind::progress) {
        job = r->progress.job;
        if (r->progress.phase == "census") break;  // mapped and being read; every later phase reads it again
    }
    ASSERT_TRUE(r && r->kind == reply_kind::progress);
    ASSERT_EQ(::truncate(mine.c_str(), 4096), 0);
    while ((r = c.read_reply(std::chrono::seconds(120))) && r->kind == reply_kind::progress) {}
    ASSERT_TRUE(r.has_value()) << d.log();
    ASSERT_EQ(r->kind, reply_kind::error);
    EXPECT_EQ(r->error.kind, error_kind::failed) << r->error.message;
    EXPECT_NE(r->error.message.find("SIGBUS"), std::string::npos) << r->error.message;
    EXPECT_EQ(job_of(d, job)["state"], "failed");
    ASSERT_TRUE(start_analysis(c, peer_dump, true, 2));
    while ((r = c.read_reply()) && r->kind == reply_kind::progress) {}
    ASSERT_TRUE(r && r->kind == reply_kind::result) << d.log();
    EXPECT_EQ(d.stop(SIGTERM), 0) << d.log();
}

}  // namespace
}  // namespace heapd::test
