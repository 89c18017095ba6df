#pragma once
// The fleet's view (`heapd fleet`): reports of many hosts grouped by service, and their leak
// suspects grouped into findings by leak signature, so that one leak on forty hosts is one finding,
// with the hosts, when it was first and last seen, how big it got and how fast it grew in each JVM.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/report/fleet_entry.h"

namespace heapd {
inline namespace report {

// The reports of one JVM (host, pid and start time) within a finding: how the suspect grew.
struct fleet_jvm_trend {
    std::string host;
    std::int64_t pid = 0;
    std::uint64_t jvm_start_time = 0;
    std::uint64_t reports = 0;
    std::int64_t first_ms = 0, last_ms = 0;
    std::uint64_t first_bytes = 0, last_bytes = 0;  // the suspect's retained bytes then
    // Bytes per hour from the first report to the last; 0 with one report or no time between.
    double bytes_per_hour() const;
};

// One report of a finding, for the page's links and the timeline.
struct fleet_sighting {
    std::string key, host;
    std::int64_t time_ms = 0;
    std::string trigger;
    std::uint64_t retained_bytes = 0;
};

// One leak across the fleet: the suspects of every report that share a leak signature.
struct fleet_finding {
    std::string signature;  // the id (leak_signature_id)
    std::string class_name, held_in, path;
    // The last static field on the path ("Sessions.static LEAK"), what tells two findings of one
    // class apart at a glance; "" when the path passes no class.
    std::string anchor;
    bool is_class = false;
    std::vector<std::string> services;                         // sorted
    std::vector<std::pair<std::string, std::uint64_t>> hosts;  // host, reports there; by reports, then name
    std::uint64_t reports = 0, oom_reports = 0;
    std::int64_t first_ms = 0, last_ms = 0;
    std::uint64_t min_bytes = 0, max_bytes = 0;  // the suspect's retained bytes
    double max_share = 0;
    std::vector<fleet_jvm_trend> jvms;      // by growth, fastest first
    std::vector<fleet_sighting> sightings;  // newest first
};

// A report on a service's timeline.
struct fleet_point {
    std::string key, host, trigger;
    std::int64_t time_ms = 0;
    std::uint64_t reachable_bytes = 0;
    std::string finding;  // the signature of its top suspect, "" when it has none
};

// One service (main class) and its reports over time.
struct fleet_service {
    std::string name;
    std::uint64_t reports = 0, oom_reports = 0;
    std::vector<std::string> hosts;   // sorted
    std::vector<fleet_point> points;  // oldest first
};

// Which reports the view takes.
struct fleet_filter {
    std::int64_t since_ms = 0;  // reports made at or after (0: all)
    std::string service;        // only this main class ("": all)
    // Suspects retaining less are left out: in a small heap, JDK structures pass the share a report
    // asks of a suspect (1 MiB by default).
    std::uint64_t min_retained = 1u << 20;
};

// The whole view.
struct fleet_view {
    std::uint64_t reports = 0, without_suspect = 0, oom_reports = 0;  // without: none over min_retained
    std::vector<std::string> hosts;                                   // sorted
    std::int64_t first_ms = 0, last_ms = 0;                           // of the reports taken
    std::vector<fleet_service> services;                              // by reports, then name
    std::vector<fleet_finding> findings;                              // by hosts, then reports, then signature
};

// Builds the view of the entries the filter takes. Memory: the entries' suspects once more, plus a
// sighting per suspect and a point per report.
fleet_view build_fleet_view(const std::vector<fleet_entry>& entries, const fleet_filter& filter);

nlohmann::ordered_json to_json(const fleet_view& v);
// For people: a line on the fleet, the findings (hosts, reports, when, how big, fastest growth),
// then the services; top findings and services (0: all).
std::string render_text(const fleet_view& v, unsigned top);

}  // namespace report
}  // namespace heapd
