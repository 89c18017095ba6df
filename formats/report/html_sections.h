#pragma once
// The HTML report's sections made of tables (histogram, retainers, waste, threads, roots, growth),
// shared by the report and diff pages (report_html.cpp, diff_html.cpp). Internal to formats/report.
#include <string>

#include <nlohmann/json.hpp>

#include "formats/report/report.h"

namespace heapd {
inline namespace report {
namespace html {

// "12.5%" of a whole, "" when the whole is 0.
std::string share_text(std::uint64_t part, std::uint64_t whole);

std::string histogram_section(const analysis_report& r);
std::string retention_tables(const analysis_report& r);
std::string waste_section(const analysis_report& r);
std::string threads_section(const analysis_report& r);
std::string roots_section(const analysis_report& r);
// The classes that grew and shrank, with a bar chart the script draws from the data's "growth".
std::string growth_section(const diff_report& d, const std::string& id_prefix);
// The data's "growth" rows for a diff (by retained bytes when both sides have them).
nlohmann::ordered_json growth_data(const diff_report& d);

}  // namespace html
}  // namespace report
}  // namespace heapd
