#pragma once
// The allocation-sites table for people (like hprof's SITES, ranked, with each site's stack under
// it) and as JSON for programs. Names from the JVM are shown through terminal_safe.
#include <string>

#include <nlohmann/json.hpp>

#include "formats/sites/allocation_profile.h"
#include "formats/sites/site_ranking.h"

namespace heapd::sites {

// The table with a header that says how it was sampled, how estimates are made and what was dropped.
std::string sites_text(const allocation_profile& profile, const site_table& table, bool collected_first);

// The same as JSON: the sampling facts, the totals and the rows.
nlohmann::json sites_json(const allocation_profile& profile, const site_table& table, bool collected_first);

}  // namespace heapd::sites
