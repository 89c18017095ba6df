#pragma once
// The pieces every HTML page of heapd is made of: escaped text, sortable tables, the page itself
// with its style, data block and script inline (formats/report/report_html.h writes the reports).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace heapd {
inline namespace report {
namespace html {

// Text made safe for an element's content or a quoted attribute value: & < > " ' escaped; bytes
// that are not UTF-8 become U+FFFD, newline and carriage return a visible \n and \r, other control
// characters but tab a visible \xNN, bidirectional controls a visible \uNNNN.
std::string escape(std::string_view text);

// One cell of a table: its text (escaped when written) and, for numbers, the value sorted by.
struct cell {
    std::string text;
    std::optional<double> value;  // sorted by this, right-aligned
    bool raw = false;             // text is HTML already (built from escaped parts)
};

// A table the page's script can sort by any column (unless it is a list of facts) and, with a
// filter, narrow by its first column.
class table {
public:
    table(std::string id, std::vector<std::string> headings, bool filter, bool sortable = true);
    void row(std::vector<cell> cells);
    std::size_t rows() const { return rows_.size(); }
    std::string html() const;

private:
    std::string id_;
    std::vector<std::string> headings_;
    bool filter_, sortable_;
    std::vector<std::vector<cell>> rows_;
};

// A number cell: its text as people read it, its value to sort by.
cell number(std::string text, double value);
cell text(std::string text);

// A whole page: head (a Content-Security-Policy that forbids every load from anywhere and every
// script but the page's own, named by its hash; the style inline), body as given, then the data
// block (JSON, read by the script) and the script.
std::string page(std::string_view title, std::string_view body, const nlohmann::ordered_json& data);

}  // namespace html
}  // namespace report
}  // namespace heapd
