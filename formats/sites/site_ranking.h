#pragma once
// hprof's SITES table (formats/report/sites_report.h) from an allocation profile: sites grouped by
// class and stack (cut to a depth), by allocating method or by class, ranked by live or allocated
// bytes, with the smallest left out below a cutoff. Percentages are of all sampled bytes, whatever
// is shown.
#include <cstdint>
#include <string>
#include <vector>

#include "formats/report/sites_report.h"
#include "formats/sites/allocation_profile.h"

namespace heapd::sites {

// What a row stands for.
enum class grouping { site, method, klass };
// Which bytes rank the rows.
enum class ranking { live, allocated };

// How to make the table.
struct table_options {
    grouping by = grouping::site;
    ranking order = ranking::live;
    int depth = 4;           // frames kept per site (hprof's depth); sites equal that far are one row
    double cutoff = 0.0001;  // rows below this share of the ranking bytes are left out (hprof's cutoff; 0: none)
    unsigned top = 0;        // at most this many rows (0: all above the cutoff)
};

// The names a table spells out at most (classes and frames of the rows shown, about): rows past
// it are left out (sites_report::cut_at_size), whatever --top asks for.
inline constexpr std::size_t max_table_text_bytes = 2u << 20;

// The table, with the profile's sampling facts; collected_first: the answer came after a full
// collection (live means reachable).
sites_report rank_sites(const allocation_profile& profile, const table_options& options, bool collected_first);

// A frame as Java prints it: "java.util.HashMap.resize(HashMap.java:704)", "(Native Method)",
// "(Unknown Source)". methods: the table the frame indexes (the profile's methods, or cpu_methods).
std::string frame_text(const std::vector<profile_method>& methods, const profile_frame& frame);

// The names of a grouping and a ranking, as on the command line ("site", "method", "class"; "live",
// "allocated").
const char* grouping_name(grouping g);
const char* ranking_name(ranking r);

}  // namespace heapd::sites
