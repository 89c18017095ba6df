#include "formats/report/html_writer.h"

#include "base/safe_text.h"
#include "formats/report/html_assets.h"
#include "formats/report/quantities.h"

namespace heapd {
inline namespace report {
namespace html {
namespace {

// The length of the UTF-8 sequence at s[i], 0 when it is not one.
std::size_t utf8_length(std::string_view s, std::size_t i) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    for (std::size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
    return n;
}

}  // namespace

std::string escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const char c = s[i];
        switch (c) {
        case '&':
            out += "&amp;";
            ++i;
            continue;
        case '<':
            out += "&lt;";
            ++i;
            continue;
        case '>':
            out += "&gt;";
            ++i;
            continue;
        case '"':
            out += "&quot;";
            ++i;
            continue;
        case '\'':
            out += "&#39;";
            ++i;
            continue;
        default: break;
        }
        const auto b = static_cast<unsigned char>(c);
        if (c == '\n' || c == '\r') {  // shown: in a <pre> or a title it would begin a line of its own
            out += c == '\n' ? "\\n" : "\\r";
            ++i;
            continue;
        }
        if (b < 0x20 && c != '\t') {
            out += text::fmt("\\x%02x", b);
            ++i;
            continue;
        }
        const std::size_t n = utf8_length(s, i);
        if (n == 0) {
            out += "\xef\xbf\xbd";
            ++i;
            continue;
        }
        if (is_bidi_control(s.substr(i), n)) {  // shown, not obeyed: it would reorder what follows
            out += line_safe(s.substr(i, n));
            i += n;
            continue;
        }
        out.append(s.substr(i, n));
        i += n;
    }
    return out;
}

table::table(std::string id, std::vector<std::string> headings, bool filter, bool sortable)
    : id_(std::move(id)), headings_(std::move(headings)), filter_(filter), sortable_(sortable) {}

void table::row(std::vector<cell> cells) { rows_.push_back(std::move(cells)); }

std::string table::html() const {
    std::string out;
    if (filter_)
        out += "<p class=\"filter\"><input class=\"table-filter\" type=\"search\" data-table=\"" + escape(id_) +
               "\" placeholder=\"filter by class\" aria-label=\"filter by class\"> <span "
               "class=\"filter-count\"></span></p>\n";
    out += std::string("<table") + (sortable_ ? " class=\"sortable\"" : "") + " id=\"" + escape(id_) + "\"><thead><tr>";
    for (std::size_t i = 0; i < headings_.size(); ++i) {
        const bool numeric = !rows_.empty() && i < rows_[0].size() && rows_[0][i].value.has_value();
        out += std::string("<th") + (numeric ? " class=\"num\" data-type=\"num\"" : " data-type=\"text\"") + ">" +
               escape(headings_[i]) + "</th>";
    }
    out += "</tr></thead>\n<tbody>\n";
    for (const auto& r : rows_) {
        out += "<tr>";
        for (std::size_t i = 0; i < r.size(); ++i) {
            const cell& c = r[i];
            if (c.value)
                out += text::fmt("<td class=\"num\" data-value=\"%.17g\">", *c.value);
            else
                out += i == 0 ? "<td class=\"cls\">" : "<td>";
            out += c.raw ? c.text : escape(c.text);
            out += "</td>";
        }
        out += "</tr>\n";
    }
    out += "</tbody></table>\n";
    return out;
}

cell number(std::string text, double value) { return {std::move(text), value, false}; }
cell text(std::string text) { return {std::move(text), std::nullopt, false}; }

std::string page(std::string_view title, std::string_view body, const nlohmann::ordered_json& data) {
    // In the data block every '<' is written \u003c: no "</script>" in a string can end the block.
    // A bidirectional control (only ever inside a string) is written as the six characters of its
    // escape, so that the page shows it rather than obeys it.
    std::string json = data.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    std::string safe;
    safe.reserve(json.size());
    for (std::size_t i = 0; i < json.size(); ++i) {
        const char c = json[i];
        const std::size_t n = static_cast<unsigned char>(c) >= 0x80 ? utf8_length(json, i) : 0;
        if (c == '<') {
            safe += "\\u003c";
        } else if (n != 0 && is_bidi_control(std::string_view(json).substr(i), n)) {
            safe += "\\" + line_safe(std::string_view(json).substr(i, n));
            i += n - 1;
        } else {
            safe += c;
        }
    }
    std::string out =
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'sha256-" +
        std::string(html_assets::script_sha256) +
        "'; style-src 'unsafe-inline'; img-src data:\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
        escape(title) + "</title>\n<style>\n";
    out += html_assets::style;
    out += "</style></head>\n<body>\n";
    out += body;
    out += "<script type=\"application/json\" id=\"heapd-data\">" + safe + "</script>\n<script>\n";
    out += html_assets::script;
    out += "</script>\n</body></html>\n";
    return out;
}

}  // namespace html
}  // namespace report
}  // namespace heapd
