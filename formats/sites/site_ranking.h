#pragma once
// hprof's SITES table from an allocation profile: sites grouped by class and stack (cut to a
// depth), by allocating method or by class, ranked by live or allocated bytes, with the smallest
// left out below a cutoff. Percentages are of all sampled bytes, whatever is shown.
#include <cstdint>
#include <string>
#include <vector>

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

// One row: its class (empty when grouped by method), its frames (as text: "a.B.m(B.java:12)"), the
// estimates, and their shares of the totals.
struct site_row {
    std::string klass;
    std::vector<std::string> frames;
    double live_bytes = 0, live_objects = 0, bytes = 0, objects = 0;
    std::uint64_t samples = 0;
    double self = 0, accumulated = 0;  // shares (0 to 1) of the ranking total
};

// The table.
struct site_table {
    grouping by = grouping::site;
    ranking order = ranking::live;
    int depth = 0;
    double cutoff = 0;
    double live_bytes = 0, live_objects = 0, bytes = 0, objects = 0;  // totals of all sites
    std::uint64_t rows_left_out = 0;                                  // below the cutoff or past top
    std::vector<site_row> rows;
};

site_table rank_sites(const allocation_profile& profile, const table_options& options);

// A frame as Java prints it: "java.util.HashMap.resize(HashMap.java:704)", "(Native Method)",
// "(Unknown Source)".
std::string frame_text(const allocation_profile& profile, const profile_frame& frame);

// The names of a grouping and a ranking, as on the command line ("site", "method", "class"; "live",
// "allocated").
const char* grouping_name(grouping g);
const char* ranking_name(ranking r);

}  // namespace heapd::sites
