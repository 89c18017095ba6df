#pragma once
// The fleet's view as one self-contained HTML page (`heapd fleet --html OUT`): the findings, a
// timeline per service (each report a point, coloured by its top finding, linked to its own page),
// and the services; nothing loaded from anywhere (the report page's policy, style and script).
#include <cstdint>
#include <map>
#include <string>

#include "formats/report/fleet_view.h"

namespace heapd {
inline namespace report {

// What the page says besides the view: where the reports are and how to reach each one's page.
struct fleet_page {
    std::string source;                        // "s3://BUCKET/PREFIX" or a directory
    std::int64_t generated_ms = 0;             // when the page was made
    std::map<std::string, std::string> links;  // report key → URL of its report.html
};

std::string render_fleet_html(const fleet_view& v, const fleet_page& page);

}  // namespace report
}  // namespace heapd
