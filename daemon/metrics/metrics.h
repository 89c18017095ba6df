#pragma once
// The daemon's metrics as plain data, and their Prometheus text exposition (format 0.0.4): per JVM
// heap, old generation, GC time and uptime (from hsperfdata, without attaching), resident memory
// against its limit; per daemon dumps and
// dump failures by trigger, analysis durations, jobs, the store and the build. Every name starts with
// heapd_ and ends with its unit (_bytes, _seconds, _ratio) or _total for counters.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/jvms/jvm_facts.h"

namespace heapd::daemon {

// One JVM's series: its labels and what its hsperfdata said.
struct jvm_metrics {
    std::int64_t pid = 0;
    uid_t uid = 0;  // for who may see it; not a label (user is)
    std::string main_class;
    std::string user;
    // Its container: Kubernetes' namespace, pod and container names, or (elsewhere) the container's
    // name as its runtime gave it (else its hostname, else its id's first 12 digits); "" on the host.
    std::string pod_namespace, pod, container;
    std::int64_t heap_used = 0, heap_committed = 0, heap_max = 0;
    std::optional<std::int64_t> old_used, old_max;
    std::optional<double> old_occupancy;  // old_used / old_max
    // The old generation (heap for ZGC and Shenandoah) as its latest collections left it, used / max,
    // and the seconds until it is full by its trend (heap_outlook.h), when known.
    std::optional<double> after_gc_occupancy;
    std::optional<double> predicted_full_seconds;
    double gc_seconds = 0;                // all collectors, since the JVM started
    std::optional<double> gc_time_share;  // gc_seconds / uptime
    double uptime_seconds = 0;
    // The process's resident memory and the limit that holds it: its memory cgroup's, else the
    // host's memory (daemon/jvms/memory_probe.h's glance).
    std::optional<std::int64_t> resident, memory_limit;
};

// A histogram of seconds: counts per bucket (upper bounds ascending; one more count for +Inf), not
// cumulative, and the sum and count of all observations.
struct seconds_histogram {
    std::vector<double> bounds;
    std::vector<std::uint64_t> counts;  // bounds.size() + 1
    double sum = 0;
    std::uint64_t count = 0;

    // A histogram with these bounds and nothing observed yet.
    static seconds_histogram with_bounds(std::vector<double> bounds);
    void observe(double seconds);
};

// How long analyses take: from 0.5 s to 30 min.
std::vector<double> analysis_seconds_bounds();

// A store entry as metrics count it: whose and how big.
struct store_usage {
    uid_t owner = 0;
    std::uint64_t bytes = 0;
};

// The daemon's own series.
struct daemon_metrics {
    std::string version;
    unsigned protocol = 0;
    double start_time_seconds = 0;                       // since the epoch
    std::map<std::string, std::uint64_t> dumps;          // dumps kept, by trigger
    std::map<std::string, std::uint64_t> dump_failures;  // dumps that failed, by trigger
    std::map<std::string, seconds_histogram> analysis;   // analysis durations, by job kind
    unsigned jobs_queued = 0, jobs_running = 0;
    std::vector<store_usage> store;  // every entry of the store
    // JVMs arming is for (oom_armer.h), by state: armed, own_path, not_armed.
    std::map<std::string, std::uint64_t> oom_arming;
    // JVMs that died while watched, by cause (death_record.h), and how many are watched now.
    std::map<std::string, std::uint64_t> deaths;
    std::optional<std::uint64_t> jvms_watched;  // absent when no death watcher runs
};

// Everything one exposition shows.
struct metrics_snapshot {
    daemon_metrics daemon;
    std::vector<jvm_metrics> jvms;  // by pid; JVMs whose hsperfdata could not be read are left out
    std::vector<uid_t> jvm_owners;  // the user of every JVM discovered, readable or not
};

// The series of a JVM whose hsperfdata summary was read, once the JVM has made its counters
// accessible; nothing otherwise.
std::optional<jvm_metrics> jvm_metrics_of(const jvm_facts& f);

// What a user who is not an admin may see: their own JVMs and store entries (as `heapctl jvms` and
// `heapctl status` show them); the daemon's counters stay whole.
metrics_snapshot visible_to(metrics_snapshot s, uid_t uid);

// The Prometheus text exposition of a snapshot, every family with its HELP and TYPE lines.
std::string render_metrics(const metrics_snapshot& s);

// The content type of what render_metrics writes.
inline constexpr std::string_view metrics_content_type = "text/plain; version=0.0.4; charset=utf-8";

// A label value escaped for the text format: backslash, double quote and line feed; bytes that are
// not UTF-8 (a command line may hold any) become U+FFFD, since scrapers refuse the whole text else.
std::string escape_label_value(std::string_view v);
// HELP text escaped for the text format: backslash and line feed.
std::string escape_help(std::string_view v);
// A sample value: integers exactly, others with enough digits to read back the same; NaN, +Inf, -Inf.
std::string format_value(double v);

}  // namespace heapd::daemon
