#pragma once
// The HTML report's script and style (formats/report/html/: the script's parts common.js,
// sunburst.js, tables.js, charts.js and start.js as one function; report.css), compiled in so that
// every report is one file that needs nothing else (cmake/embed_text.cmake).
#include <string_view>

namespace heapd {
inline namespace report {
namespace html_assets {

extern const std::string_view script;
extern const std::string_view style;
// Base64 SHA-256 of "\n" and each, for the page's Content-Security-Policy (html_writer.cpp).
extern const std::string_view script_sha256;
extern const std::string_view style_sha256;

}  // namespace html_assets
}  // namespace report
}  // namespace heapd
