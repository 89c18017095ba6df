// The HTML page of a diff (report_html.h): both dumps' facts, then what grew and shrank.
#include "formats/report/html_sections.h"
#include "formats/report/html_writer.h"
#include "formats/report/report_html.h"
#include "formats/report/report_text.h"

namespace heapd {
inline namespace report {

std::string render_html(const diff_report& d, const std::string& title) {
    html::table sides("sides-table", {"", "Before", "After"}, false, false);
    auto row = [&](const char* what, std::string before, std::string after) {
        sides.row({html::text(what), html::text(std::move(before)), html::text(std::move(after))});
    };
    row("File", d.before.file, d.after.file);
    row("Taken", d.before.timestamp_ms ? text::utc_time(d.before.timestamp_ms) : "",
        d.after.timestamp_ms ? text::utc_time(d.after.timestamp_ms) : "");
    row("Objects", text::grouped(d.before.objects), text::grouped(d.after.objects));
    row("Heap", text::human_bytes(d.before.shallow_bytes), text::human_bytes(d.after.shallow_bytes));
    row("Classes", text::grouped(d.before.classes), text::grouped(d.after.classes));
    if (d.retained)
        row("Reachable", text::human_bytes(d.before.reachable_bytes), text::human_bytes(d.after.reachable_bytes));
    std::string body = "<header><h1>" + html::escape(title) + "</h1>\n" + sides.html() + "</header>\n" +
                       "<section id=\"growth\"><h2>What grew</h2>\n" + html::growth_section(d, "") + "</section>\n" +
                       "<footer>heapd diff</footer>\n";
    nlohmann::ordered_json data = {{"growth", html::growth_data(d)}};
    return html::page("heapd: " + title, body, data);
}

}  // namespace report
}  // namespace heapd
