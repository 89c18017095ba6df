#include "formats/report/fleet_html.h"

#include <algorithm>
#include <array>

#include "formats/report/html_sections.h"
#include "formats/report/html_writer.h"
#include "formats/report/quantities.h"

namespace heapd {
inline namespace report {
namespace {

using html::escape;
using json = nlohmann::ordered_json;

// Colours of the first findings on the timeline; later findings share the last one.
constexpr std::array<const char*, 9> palette{"#d1495b", "#00798c", "#edae49", "#66a182", "#8d5a97",
                                             "#3c6e9f", "#e07a5f", "#5f7470", "#8896a3"};
constexpr std::size_t sightings_shown = 50;

std::string when(std::int64_t ms) { return text::utc_time(static_cast<std::uint64_t>(std::max<std::int64_t>(ms, 0))); }

std::string link(const fleet_page& page, const std::string& key, const std::string& label) {
    auto at = page.links.find(key);
    if (at == page.links.end()) return escape(label);
    return "<a href=\"" + escape(at->second) + "\">" + escape(label) + "</a>";
}

std::string colour_of(const std::map<std::string, std::size_t>& rank, const std::string& signature) {
    auto at = rank.find(signature);
    return at == rank.end() ? palette.back() : palette[std::min(at->second, palette.size() - 1)];
}

std::string header(const fleet_view& v, const fleet_page& page) {
    std::string out = "<header><h1>heapd: the fleet</h1>\n<p class=\"verdict\">";
    if (v.findings.empty())
        out += text::fmt("No leak suspect in %llu reports.", static_cast<unsigned long long>(v.reports));
    else
        out += text::fmt("%zu finding%s: ", v.findings.size(), v.findings.size() == 1 ? "" : "s") +
               escape(v.findings.front().class_name) +
               text::fmt(" on %zu host%s heads the list.", v.findings.front().hosts.size(),
                         v.findings.front().hosts.size() == 1 ? "" : "s");
    out += "</p>\n<dl class=\"facts\">\n";
    auto fact = [&](const char* name, const std::string& value) {
        out += "<dt>" + escape(name) + "</dt><dd>" + escape(value) + "</dd>\n";
    };
    fact("Reports from", page.source);
    fact("Reports", text::grouped(v.reports) + " (" + text::grouped(v.oom_reports) + " after an OutOfMemoryError, " +
                        text::grouped(v.without_suspect) + " without a leak suspect)");
    fact("Hosts", text::grouped(v.hosts.size()));
    fact("Services", text::grouped(v.services.size()));
    if (v.reports != 0) fact("Period", when(v.first_ms) + " to " + when(v.last_ms));
    fact("Made", when(page.generated_ms));
    return out + "</dl></header>\n";
}

std::string findings_section(const fleet_view& v, const fleet_page& page) {
    if (v.findings.empty())
        return html::section("findings", "Findings", "<p class=\"empty\">No leak suspect in any report.</p>\n");
    html::table t("findings-table",
                  {"Suspect", "Services", "Hosts", "Reports", "After an OOM", "First seen", "Last seen", "Retains",
                   "Fastest growth"},
                  true);
    std::string details;
    for (std::size_t i = 0; i < v.findings.size(); ++i) {
        const fleet_finding& f = v.findings[i];
        std::string services;
        for (const std::string& s : f.services) services += (services.empty() ? "" : ", ") + s;
        const double rate = f.jvms.empty() ? 0 : f.jvms.front().bytes_per_hour();
        std::string suspect =
            "<span class=\"swatch\" style=\"background:" + std::string(palette[std::min(i, palette.size() - 1)]) +
            "\"></span><a href=\"#finding-" + escape(f.signature) + "\">" + (f.is_class ? "instances of " : "") +
            escape(f.class_name) + "</a>" +
            (f.anchor.empty() ? "" : "<br><span class=\"muted\">in " + escape(f.anchor) + "</span>");
        t.row({html::cell{suspect, std::nullopt, true}, html::text(services), html::count_cell(f.hosts.size()),
               html::count_cell(f.reports), html::count_cell(f.oom_reports), html::text(when(f.first_ms)),
               html::text(when(f.last_ms)),
               html::number(text::human_bytes(f.min_bytes) + " to " + text::human_bytes(f.max_bytes),
                            static_cast<double>(f.max_bytes)),
               html::number(rate == 0 ? "" : text::human_bytes(static_cast<std::uint64_t>(std::max(rate, 0.0))) + "/h",
                            rate)});
        details += "<details class=\"finding\" id=\"finding-" + escape(f.signature) + "\"><summary>" +
                   (f.is_class ? "instances of " : "") + escape(f.class_name) +
                   (f.anchor.empty() ? "" : " in " + escape(f.anchor)) + " <span class=\"id\">" + escape(f.signature) +
                   "</span></summary>\n";
        details += "<p>Held in <code>" + escape(f.held_in) + "</code>, up to " +
                   escape(text::round_percent(f.max_share * 100)) +
                   " of the reachable heap. Path from the GC root: <code>" + escape(f.path) + "</code></p>\n<p>Hosts: ";
        for (std::size_t h = 0; h < f.hosts.size(); ++h)
            details += (h == 0 ? "" : ", ") + escape(f.hosts[h].first) +
                       text::fmt(" (%llu)", static_cast<unsigned long long>(f.hosts[h].second));
        details += "</p>\n";
        html::table jvms("jvms-" + f.signature, {"Host", "PID", "Reports", "First", "Last", "Retained then", "Growth"},
                         false);
        for (const fleet_jvm_trend& j : f.jvms)
            jvms.row({html::text(j.host),
                      html::count_cell(static_cast<std::uint64_t>(std::max<std::int64_t>(j.pid, 0))),
                      html::count_cell(j.reports), html::text(when(j.first_ms)), html::text(when(j.last_ms)),
                      html::number(text::human_bytes(j.first_bytes) + " to " + text::human_bytes(j.last_bytes),
                                   static_cast<double>(j.last_bytes)),
                      html::number(
                          j.reports < 2
                              ? ""
                              : text::human_bytes(static_cast<std::uint64_t>(std::max(j.bytes_per_hour(), 0.0))) + "/h",
                          j.bytes_per_hour())});
        details += "<h3>Each JVM</h3>\n" + jvms.html() + "<h3>Reports</h3>\n<ul class=\"groups\">\n";
        for (std::size_t s = 0; s < std::min(f.sightings.size(), sightings_shown); ++s) {
            const fleet_sighting& x = f.sightings[s];
            details += "<li>" + link(page, x.key, when(x.time_ms) + " " + x.host) + " <span class=\"muted\">" +
                       escape(x.trigger) + ", " + escape(text::human_bytes(x.retained_bytes)) + "</span></li>\n";
        }
        if (f.sightings.size() > sightings_shown)
            details +=
                text::fmt("<li class=\"muted\">%zu earlier reports</li>\n", f.sightings.size() - sightings_shown);
        details += "</ul></details>\n";
    }
    return html::section("findings", "Findings",
                         "<p>Leak suspects of every report, one finding per leak signature: the suspect's class and "
                         "its path from the GC root, whatever the host, the ids or the sizes.</p>\n" +
                             t.html() + details);
}

std::string timeline_section(const fleet_view& v, const fleet_page& page) {
    if (v.services.empty()) return "";
    std::map<std::string, std::size_t> rank;
    for (std::size_t i = 0; i < v.findings.size(); ++i) rank[v.findings[i].signature] = i;
    constexpr int width = 960, left = 220, right = 20, row = 30, top = 10;
    const int height = top + row * static_cast<int>(v.services.size()) + 30;
    const double span = static_cast<double>(std::max<std::int64_t>(v.last_ms - v.first_ms, 1));
    auto x_of = [&](std::int64_t ms) {
        if (v.last_ms == v.first_ms) return left + (width - left - right) / 2.0;
        return left + (width - left - right) * static_cast<double>(ms - v.first_ms) / span;
    };
    std::string svg = text::fmt(
        "<svg class=\"timeline\" viewBox=\"0 0 %d %d\" width=\"100%%\" role=\"img\" "
        "aria-label=\"Reports over time by service\">\n",
        width, height);
    for (std::size_t s = 0; s < v.services.size(); ++s) {
        const fleet_service& service = v.services[s];
        const int y = top + row * static_cast<int>(s) + row / 2;
        svg +=
            text::fmt("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#d5dbe1\"/>", left, y, width - right, y);
        svg += text::fmt("<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"12\">", left - 8, y + 4) +
               escape(service.name.size() > 32 ? "…" + service.name.substr(service.name.size() - 31) : service.name) +
               "</text>\n";
        for (const fleet_point& p : service.points) {
            const bool oom = p.trigger == "oom";
            const std::string fill = p.finding.empty() ? "#ffffff" : colour_of(rank, p.finding);
            std::string circle = text::fmt("<circle class=\"report-point\" cx=\"%.1f\" cy=\"%d\" r=\"%d\" fill=\"",
                                           x_of(p.time_ms), y, oom ? 7 : 5) +
                                 fill + "\" stroke=\"" + (oom ? "#222" : "#6b7885") + "\" stroke-width=\"" +
                                 (oom ? "2" : "1") + "\"><title>" +
                                 escape(p.host + ", " + when(p.time_ms) + ", " + (p.trigger.empty() ? "?" : p.trigger) +
                                        (p.finding.empty() ? ", no leak suspect" : ", finding " + p.finding)) +
                                 "</title></circle>";
            auto at = page.links.find(p.key);
            svg += at == page.links.end() ? circle : "<a href=\"" + escape(at->second) + "\">" + circle + "</a>";
            svg += "\n";
        }
    }
    const int axis = top + row * static_cast<int>(v.services.size()) + 18;
    svg += text::fmt("<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#5d6b78\">", left, axis) +
           escape(when(v.first_ms)) + "</text>";
    svg += text::fmt("<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#5d6b78\" text-anchor=\"end\">", width - right,
                     axis) +
           escape(when(v.last_ms)) + "</text>\n</svg>\n";
    return html::section("timeline", "Timeline",
                         "<p>Each report a point, coloured as its top finding (white: no leak suspect; ringed dark and "
                         "bigger: after an OutOfMemoryError); each links to its own page.</p>\n" +
                             svg);
}

std::string services_section(const fleet_view& v, const fleet_page& page) {
    html::table t("services-table", {"Service", "Reports", "After an OOM", "Hosts", "Latest report"}, true);
    for (const fleet_service& s : v.services) {
        const fleet_point& last = s.points.back();
        t.row({html::text(s.name), html::count_cell(s.reports), html::count_cell(s.oom_reports),
               html::count_cell(s.hosts.size()),
               html::cell{link(page, last.key, when(last.time_ms) + " " + last.host), std::nullopt, true}});
    }
    return html::section("services", "Services", t.html());
}

}  // namespace

std::string render_fleet_html(const fleet_view& v, const fleet_page& page) {
    std::string body =
        header(v, page) + findings_section(v, page) + timeline_section(v, page) + services_section(v, page);
    body += "<footer>Made by heapd fleet from " + escape(page.source) + ".</footer>\n";
    return html::page("heapd: the fleet", body, json::object());
}

}  // namespace report
}  // namespace heapd
