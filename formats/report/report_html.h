#pragma once
// The HTML report: one self-contained page (style, script and data inline, nothing loaded from
// anywhere) that shows an analysis report or a diff. It is a view of the same report the JSON form
// carries, not a second analysis; every string from a dump is escaped.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "formats/report/history.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace report {

// Where a report's dump came from and what came before it, when heapd's store knows.
struct html_context {
    std::string title;  // the page's heading; "" names the dump's file
    std::string dump_id, host, trigger, command_line;
    std::int64_t pid = 0;
    std::int64_t created_ms = 0;
    std::vector<history_point> history;  // dumps of the same JVM, oldest first, this one last
    std::optional<diff_report> growth;   // since the previous dump of the JVM
    std::string previous_dump;           // its id
};

// The page for an analysis report: facts and verdict, leak suspects, the dominator tree as a
// zoomable picture, tables, and (with several dumps) the JVM's history and growth.
std::string render_html(const analysis_report& r, const html_context& context);

// The page for a diff: both dumps' facts, the classes that grew and shrank as bars and tables.
std::string render_html(const diff_report& d, const std::string& title);

// Writes a page to path (through a temporary file, mode 0600: reports show heap contents) and
// says so: "HTML report written to PATH (SIZE)".
result<std::string> save_html(const std::string& path, std::string_view page);

}  // namespace report
}  // namespace heapd
