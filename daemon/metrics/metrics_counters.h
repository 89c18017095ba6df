#pragma once
// The daemon's counters for its metrics: dumps kept and failed by trigger, and how long analyses
// took. Fed with every change of every job (job_manager::observe), from any thread.
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/metrics/metrics.h"
#include "daemon/store/job_record.h"

namespace heapd::daemon {

// Counts what jobs did since the daemon started; thread-safe.
class metrics_counters {
public:
    metrics_counters();
    // A job changed (queued, a phase started, it ended): counted when it ends.
    void job_changed(const job_record& job);
    // A watched JVM died of that cause (death_cause_name).
    void jvm_died(std::string_view cause);
    // A copy of the counters, into a snapshot's daemon part.
    void copy_to(daemon_metrics& d) const;

private:
    using clock = std::chrono::steady_clock;
    // When the analysis of a running job started and, once its report is being saved, ended.
    struct analysis_time {
        clock::time_point start;
        std::optional<clock::time_point> end;
    };

    mutable std::mutex mu_;
    std::map<std::string, std::uint64_t> dumps_, dump_failures_, deaths_;
    std::map<std::string, seconds_histogram> analysis_;
    std::map<std::uint64_t, analysis_time> analyzing_;  // running jobs, by id
};

}  // namespace heapd::daemon
