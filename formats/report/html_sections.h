#pragma once
// The HTML report's sections made of tables (histogram, retainers, waste, threads, roots, growth),
// shared by the report and diff pages (report_html.cpp, diff_html.cpp). Internal to formats/report.
#include <string>

#include <nlohmann/json.hpp>

#include "formats/report/html_writer.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace report {
namespace html {

// Table cells of a byte size, a count and a signed change (bytes or a count), sorted by value.
cell bytes_cell(std::uint64_t b);
cell count_cell(std::uint64_t n);
cell delta_cell(std::int64_t d, bool bytes);
// <section id=ID><h2>HEADING</h2>BODY</section>, the heading escaped.
std::string section(const char* id, const std::string& heading, const std::string& body);
// "12.5%" of a whole, "" when the whole is 0.
std::string share_text(std::uint64_t part, std::uint64_t whole);

std::string histogram_section(const analysis_report& r);
std::string retention_tables(const analysis_report& r);
std::string waste_section(const analysis_report& r);
std::string threads_section(const analysis_report& r);
// Direct buffers, threads by name and stack, class loaders, and who holds each (off_heap_html.cpp).
std::string off_heap_section(const analysis_report& r);
std::string roots_section(const analysis_report& r);
// The classes that grew and shrank, with a bar chart the script draws from the data's "growth".
std::string growth_section(const diff_report& d, const std::string& id_prefix);
// The data's "growth" rows for a diff (by retained bytes when both sides have them).
nlohmann::ordered_json growth_data(const diff_report& d);

}  // namespace html
}  // namespace report
}  // namespace heapd
