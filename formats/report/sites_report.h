#pragma once
// The allocation-sites table (hprof's SITES) made from what heapd's agent sampled in a JVM
// (formats/sites/site_ranking.h makes it): how it was sampled, the totals, and the ranked rows, each
// a class and a stack (or a method, or a class) with estimated live and allocated bytes and objects.
// Its JSON (the daemon's `sites` reply, `heapd sites --json`) and text forms, for heapd and heapctl.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace heapd {
inline namespace report {

// One row: its class (empty when grouped by method), its frames as text ("a.B.m(B.java:12)"; for a
// method row, the method "a.B.m"), the estimates, and their shares (0 to 1) of the ranked total.
struct site_row {
    std::string klass;
    std::vector<std::string> frames;
    double live_bytes = 0, live_objects = 0, bytes = 0, objects = 0;
    std::uint64_t samples = 0;
    double self = 0, accumulated = 0;
};

// Samples the agent could not keep, by cause.
struct sites_dropped {
    std::uint64_t no_slot = 0;      // the ring between application threads and the agent was full
    std::uint64_t site_cap = 0;     // the site table was full
    std::uint64_t unnamed = 0;      // a class or method could not be named (or its table was full)
    std::uint64_t not_watched = 0;  // counted as allocated, but the live table was full
};

// The table and how it was made.
struct sites_report {
    std::string agent;          // the agent's version
    std::int64_t interval = 0;  // bytes between samples, on average, per thread
    int sampled_depth = 0;      // frames kept per sample
    double seconds = 0;         // sampled for
    std::uint64_t samples = 0;
    sites_dropped dropped;
    std::uint64_t agent_memory_bytes = 0;
    bool collected_first = false;  // live means reachable after a full collection, else not yet collected
    std::string by = "site";       // site, method or class
    std::string order = "live";    // live or allocated
    int depth = 0;                 // frames per row when by site
    double cutoff = 0;
    double live_bytes = 0, live_objects = 0, bytes = 0, objects = 0;  // totals of all sites
    std::uint64_t rows_left_out = 0;                                  // below the cutoff or past top
    bool cut_at_size = false;  // rows were left out as well because the names shown reached their bound
    std::vector<site_row> rows;
};

nlohmann::ordered_json to_json(const sites_report& r);
// Reads what to_json wrote (a daemon's reply); bad_value naming what is wrong.
result<sites_report> sites_report_from_json(const nlohmann::ordered_json& j);

// The table for people: a header that says how it was sampled, how estimates are made and what was
// dropped, then the rows with each site's stack under it. Names from the JVM go through line_safe.
std::string render_sites_text(const sites_report& r);

}  // namespace report
}  // namespace heapd
