#include "daemon/metrics/metrics_counters.h"

#include <optional>
#include <string_view>

namespace heapd::daemon {
namespace {

// The phases of a dump job before its analysis (dump_job.cpp); every other phase but "save" is the
// analysis's (analyze_job.cpp, and the phases the analysis process reports).
bool before_analysis(std::string_view phase) {
    return phase.empty() || phase == "prepare" || phase == "waiting for the JVM" || phase == "dump";
}

}  // namespace

metrics_counters::metrics_counters() {
    // Known label values start at zero, so their series exist before the first event.
    for (const char* trigger : {"request", "oom"}) {
        dumps_[trigger] = 0;
        dump_failures_[trigger] = 0;
    }
    for (const char* cause : {"oom_kill", "killed", "crashed", "stopped", "exited", "failed", "unknown"})
        deaths_[cause] = 0;
    for (const char* kind : {"dump", "analyze"})
        analysis_[kind] = seconds_histogram::with_bounds(analysis_seconds_bounds());
}

void metrics_counters::job_changed(const job_record& job) {
    const auto now = clock::now();
    std::lock_guard lock(mu_);
    if (job.state == job_state::running) {
        auto it = analyzing_.find(job.id);
        if (job.phase == "save") {
            if (it != analyzing_.end() && !it->second.end) it->second.end = now;
        } else if (!before_analysis(job.phase) && it == analyzing_.end()) {
            analyzing_.emplace(job.id, analysis_time{now, std::nullopt});
        }
        return;
    }
    if (!job.final()) return;
    auto it = analyzing_.find(job.id);
    if (job.state == job_state::done && it != analyzing_.end()) {
        auto& h = analysis_[job.kind];
        if (h.bounds.empty()) h = seconds_histogram::with_bounds(analysis_seconds_bounds());
        h.observe(std::chrono::duration<double>(it->second.end.value_or(now) - it->second.start).count());
    }
    if (it != analyzing_.end()) analyzing_.erase(it);
    if (job.kind == "dump") {
        if (job.state == job_state::done)
            ++dumps_[job.trigger];
        else if (job.state == job_state::failed)
            ++dump_failures_[job.trigger];
    }
}

void metrics_counters::jvm_died(std::string_view cause) {
    std::lock_guard lock(mu_);
    ++deaths_[std::string(cause)];
}

void metrics_counters::copy_to(daemon_metrics& d) const {
    std::lock_guard lock(mu_);
    d.dumps = dumps_;
    d.dump_failures = dump_failures_;
    d.deaths = deaths_;
    d.analysis = analysis_;
}

}  // namespace heapd::daemon
