// The daemon's counters as jobs change: dumps kept and failed by trigger, and analysis durations
// measured from the first phase of the analysis to the saving of its report.
#include "daemon/metrics/metrics_counters.h"

#include <gtest/gtest.h>

#include <thread>

namespace heapd::daemon {
namespace {

// Feeds the counters the changes a job goes through: queued, running with each phase, then final.
void run_job(metrics_counters& c, std::uint64_t id, const std::string& kind, const std::string& trigger,
             const std::vector<std::string>& phases, job_state end, std::chrono::milliseconds pause_in = {},
             const std::string& pause_phase = {}) {
    job_record r;
    r.id = id;
    r.kind = kind;
    r.trigger = trigger;
    c.job_changed(r);
    r.state = job_state::running;
    c.job_changed(r);
    for (const std::string& p : phases) {
        r.phase = p;
        c.job_changed(r);
        if (p == pause_phase) std::this_thread::sleep_for(pause_in);
    }
    r.state = end;
    c.job_changed(r);
}

daemon_metrics counted(const metrics_counters& c) {
    daemon_metrics d;
    c.copy_to(d);
    return d;
}

const std::vector<std::string> dump_phases = {"prepare", "dump",       "open",     "index",
                                              "census",  "dominators", "suspects", "save"};

TEST(metrics_counters, known_triggers_and_kinds_start_at_zero) {
    metrics_counters c;
    auto d = counted(c);
    EXPECT_EQ(d.dumps.at("request"), 0u);
    EXPECT_EQ(d.dumps.at("oom"), 0u);
    EXPECT_EQ(d.dump_failures.at("request"), 0u);
    EXPECT_EQ(d.analysis.at("dump").count, 0u);
    EXPECT_EQ(d.analysis.at("analyze").count, 0u);
    EXPECT_EQ(d.analysis.at("dump").counts.size(), analysis_seconds_bounds().size() + 1);
}

TEST(metrics_counters, a_dump_that_ends_well_counts_once_with_its_analysis_time) {
    metrics_counters c;
    run_job(c, 1, "dump", "request", dump_phases, job_state::done, std::chrono::milliseconds(30), "census");
    auto d = counted(c);
    EXPECT_EQ(d.dumps.at("request"), 1u);
    EXPECT_EQ(d.dump_failures.at("request"), 0u);
    ASSERT_EQ(d.analysis.at("dump").count, 1u);
    EXPECT_GE(d.analysis.at("dump").sum, 0.03);  // the pause in an analysis phase is in it
    EXPECT_EQ(d.analysis.at("analyze").count, 0u);
}

TEST(metrics_counters, failures_count_by_trigger_and_leave_no_analysis_time) {
    metrics_counters c;
    run_job(c, 1, "dump", "request", {"prepare"}, job_state::failed);
    run_job(c, 2, "dump", "rule:old-gen", {"prepare", "dump", "index"}, job_state::failed);
    run_job(c, 3, "dump", "oom", {"prepare", "dump"}, job_state::cancelled);
    auto d = counted(c);
    EXPECT_EQ(d.dump_failures.at("request"), 1u);
    EXPECT_EQ(d.dump_failures.at("rule:old-gen"), 1u);
    EXPECT_EQ(d.dump_failures.at("oom"), 0u);  // cancelled is not failed
    EXPECT_EQ(d.dumps.at("request"), 0u);
    EXPECT_EQ(d.dumps.at("oom"), 0u);
    EXPECT_EQ(d.analysis.at("dump").count, 0u);
}

TEST(metrics_counters, an_analysis_of_a_file_times_its_analysis_and_counts_no_dump) {
    metrics_counters c;
    run_job(c, 7, "analyze", "heapctl report", {"open", "index", "save"}, job_state::done);
    auto d = counted(c);
    EXPECT_EQ(d.analysis.at("analyze").count, 1u);
    EXPECT_EQ(d.dumps.at("request"), 0u);
    EXPECT_FALSE(d.dumps.contains("heapctl report"));
}

}  // namespace
}  // namespace heapd::daemon
