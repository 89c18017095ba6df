// The analysis job: a dump passed as a descriptor is analyzed in place and its report kept as a
// store entry; progress goes through every phase in order.
#include "daemon/jobs/analyze_job.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <spdlog/sinks/ostream_sink.h>
#include <boost/asio/io_context.hpp>

#include "support/generated_dump.h"
#include "support/jvm_process.h"
#include "support/shaped_heap.h"

namespace heapd::daemon {
namespace {

using test::scratch_dir;

// A store, jobs with one worker, and the io_context the test runs.
struct fixture {
    scratch_dir dir;
    std::ostringstream log_text;
    boost::asio::io_context io;
    std::unique_ptr<store> st;
    std::unique_ptr<job_manager> jobs;
    fixture() {
        store_options o;
        o.root = dir.file("store");
        store_recovery rec;
        st = std::move(*store::open(o, rec));
        auto log = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text));
        jobs = std::make_unique<job_manager>(io, *st, 1, log);
    }
    // Submits an analysis of path and runs until it ends; the records the listener saw.
    std::vector<job_record> analyze(const std::string& path) {
        analyze_request r;
        r.fd = unique_fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        r.name = path;
        r.uid = 1000;
        r.gid = 1000;
        r.executable = test::heapd_binary();  // the analysis process is heapd's, not this test's
        std::vector<job_record> seen;
        job_record spec;
        spec.kind = "analyze";
        jobs->submit(spec, make_analyze_work(*st, std::move(r)), [&](const job_record& j) { seen.push_back(j); });
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        while ((seen.empty() || !seen.back().final()) && std::chrono::steady_clock::now() < deadline) {
            io.restart();
            io.run_for(std::chrono::milliseconds(10));
        }
        return seen;
    }
};

TEST(analyze_job, keeps_the_full_report_as_an_entry_of_the_caller) {
    fixture f;
    test::shaped_heap heap(300, 2000, 100, 10, 400);
    const std::string path = f.dir.file("shaped.hprof");
    ASSERT_TRUE(heap.b.write_to(path));
    auto seen = f.analyze(path);
    ASSERT_FALSE(seen.empty());
    const job_record& end = seen.back();
    ASSERT_EQ(end.state, job_state::done) << end.error;
    auto meta = f.st->find(end.entry);
    ASSERT_TRUE(meta.has_value());
    EXPECT_EQ(meta->owner_uid, 1000u);
    EXPECT_EQ(meta->source, "file");
    EXPECT_FALSE(meta->has_dump);  // analyzed in place: the dump is not copied
    EXPECT_EQ(meta->file, path);
    EXPECT_EQ(meta->file_bytes, heap.b.size());
    EXPECT_NE(meta->headline.find("leak suspect"), std::string::npos) << meta->headline;
    auto report = f.st->load_report(end.entry);
    ASSERT_TRUE(report.has_value());
    EXPECT_FALSE(report->retention.leak_suspects.empty());
    EXPECT_EQ(report->summary.file, path);
    // Phases in the order they run, progress never going back, ending at the whole dump.
    std::vector<std::string> phases;
    std::uint64_t last = 0;
    for (const job_record& r : seen) {
        if (r.state != job_state::running || r.phase.empty()) continue;
        if (phases.empty() || phases.back() != r.phase) phases.push_back(r.phase);
        EXPECT_GE(r.done, last) << r.phase;
        EXPECT_EQ(r.total, heap.b.size());
        last = r.done;
    }
    EXPECT_EQ(phases, (std::vector<std::string>{"open", "index", "census", "object graph", "threads", "waste",
                                                "dominators", "suspects", "save"}));
    EXPECT_EQ(last, heap.b.size());
}

// The long phases tell how far they are, so a client's progress bar moves during them too.
TEST(analyze_job, progress_moves_within_the_object_graph_and_the_dominators) {
    fixture f;
    const test::generated_dump dump = test::generate_dump(f.dir.file("generated.hprof"), "24M", 16384);
    auto seen = f.analyze(dump.path);
    ASSERT_FALSE(seen.empty());
    ASSERT_EQ(seen.back().state, job_state::done) << seen.back().error;
    std::map<std::string, std::set<std::uint64_t>> done_by_phase;
    std::uint64_t last = 0;
    for (const job_record& r : seen) {
        if (r.state != job_state::running || r.phase.empty()) continue;
        done_by_phase[r.phase].insert(r.done);
        EXPECT_GE(r.done, last) << r.phase;
        last = r.done;
    }
    // The graph's three walks and the dominator tree's steps each move it several times.
    EXPECT_GE(done_by_phase["object graph"].size(), 3u);
    EXPECT_GE(done_by_phase["dominators"].size(), 3u);
    const double graph_end = analysis_share_before("threads") * static_cast<double>(dump.bytes);
    EXPECT_LE(static_cast<double>(*done_by_phase["object graph"].rbegin()), graph_end + 1);
}

TEST(analyze_job, a_file_that_is_no_dump_fails_as_bad_input) {
    fixture f;
    const std::string path = f.dir.file("text.hprof");
    std::ofstream(path) << "not a heap dump at all\n";
    auto seen = f.analyze(path);
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen.back().state, job_state::failed);
    EXPECT_EQ(seen.back().error_kind, "bad_input");
    EXPECT_NE(seen.back().error.find("not an HPROF file"), std::string::npos) << seen.back().error;
    EXPECT_TRUE(f.st->entries().empty());
}

TEST(analyze_job, a_compressed_dump_is_inflated_in_the_store_scratch_and_nothing_stays) {
    fixture f;
    test::shaped_heap heap;
    const std::string path = f.dir.file("shaped.hprof.gz");
    {
        gzFile gz = gzopen(path.c_str(), "wb");
        ASSERT_NE(gz, nullptr);
        gzwrite(gz, heap.b.bytes().data(), static_cast<unsigned>(heap.b.size()));
        gzclose(gz);
    }
    auto seen = f.analyze(path);
    ASSERT_EQ(seen.back().state, job_state::done) << seen.back().error;
    EXPECT_EQ(seen.back().total, heap.b.size());  // the inflated size
    EXPECT_TRUE(std::filesystem::is_empty(f.st->tmp_dir()));
    EXPECT_FALSE(f.st->load_report(seen.back().entry)->retention.leak_suspects.empty());
}

TEST(analyze_job, progress_shares_grow_to_one) {
    double last = -1;
    for (const char* phase :
         {"open", "index", "census", "object graph", "threads", "waste", "dominators", "suspects", "save"}) {
        double share = analysis_share_before(phase);
        EXPECT_GT(share, last) << phase;
        EXPECT_LT(share, 1.0) << phase;
        last = share;
    }
}

}  // namespace
}  // namespace heapd::daemon
