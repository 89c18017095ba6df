// The HTML report of an analysis (report_html.h): facts and verdict, suspects, the dominator tree's
// data for the picture, the table sections (html_sections.cpp), history and growth.
#include "formats/report/report_html.h"

#include <set>

#include "base/atomic_file.h"

#include "base/hex_text.h"
#include "formats/report/html_sections.h"
#include "formats/report/html_writer.h"
#include "formats/report/quantities.h"
#include "formats/report/report_text.h"

namespace heapd {
inline namespace report {
namespace {

using html::escape;
using json = nlohmann::ordered_json;

std::string code(const std::string& s) { return "<code>" + escape(s) + "</code>"; }
std::string strong(const std::string& s) { return "<strong>" + escape(s) + "</strong>"; }
std::string fact(const std::string& name, const std::string& value) {
    return value.empty() ? "" : "<dt>" + escape(name) + "</dt><dd>" + escape(value) + "</dd>\n";
}

// What the JVM ran: the first word of its command line (its main class or jar).
std::string main_of(const std::string& command_line) { return command_line.substr(0, command_line.find(' ')); }

// One sentence: what is most likely wrong with this heap.
std::string verdict(const analysis_report& r) {
    const retention_report& t = r.retention;
    if (!t.computed) return "Retained sizes were not computed for this report: it has no leak suspects.";
    if (t.leak_suspects.empty()) {
        std::string s = text::fmt("No leak suspect: no object or class retains %.0f%% of the reachable heap",
                                  100 * t.suspect_threshold);
        if (!t.dominators.empty())
            s += "; the biggest retainer, " + t.dominators[0].class_name + ", keeps " +
                 html::share_text(t.dominators[0].retained_bytes, t.share_base());
        return escape(s + ".");
    }
    const leak_suspect& s = t.leak_suspects[0];
    std::string what = s.is_class ? text::grouped(s.instances) + " instances of " + s.suspect.class_name
                                  : "One " + s.suspect.class_name;
    std::string out = "Likely leak: " + escape(what) + " " + (s.is_class ? "retain " : "retains ") +
                      strong(text::human_bytes(s.retained_bytes) + " (" + text::fmt("%.1f%%", 100 * s.share) + ")") +
                      " of the reachable heap";
    if (!s.is_class && !s.accumulated.empty())
        out += ", mostly " + escape(text::grouped(s.accumulated[0].count) + " " + s.accumulated[0].class_name);
    if (!s.allocated_at.empty()) out += ", allocated at " + code(s.allocated_at[0].origin);
    return out + ".";
}

std::string header(const analysis_report& r, const html_context& c) {
    const summary_report& s = r.summary;
    std::string title = !c.title.empty()          ? c.title
                        : !c.command_line.empty() ? "Heap of " + main_of(c.command_line)
                        : !s.file.empty()         ? "Heap dump " + s.file
                                                  : std::string("Heap dump");
    std::string out =
        "<header><h1>" + escape(title) + "</h1>\n<p class=\"verdict\">" + verdict(r) + "</p>\n<dl class=\"facts\">\n";
    std::string jvm = s.java_version.empty() ? "version unknown" : "Java " + s.java_version;
    if (!s.java_runtime.empty()) jvm += ", " + s.java_runtime;
    if (!s.writer.empty()) jvm += " (written by the " + s.writer + ")";
    out += fact("JVM", jvm);
    out += fact("Process",
                c.pid != 0 ? std::to_string(c.pid) + (c.command_line.empty() ? "" : ": " + c.command_line) : "");
    out += fact("Host", c.host);
    out += fact("Taken", s.timestamp_ms != 0 ? text::utc_time(s.timestamp_ms) : "");
    out += fact("Trigger", c.trigger);
    std::string heap = text::human_bytes(s.shallow_bytes) + " in " +
                       text::grouped(s.instances + s.object_arrays + s.primitive_arrays) + " objects of " +
                       text::grouped(s.classes) + " classes";
    if (r.retention.computed)
        heap += "; " + text::human_bytes(r.retention.reachable_bytes) + " reachable, " +
                text::human_bytes(r.retention.unreachable_bytes) + " garbage" +
                (r.retention.filler_objects != 0
                     ? " (" + text::human_bytes(r.retention.filler_bytes) + " of it the collector's filler objects)"
                     : std::string());
    out += fact("Heap", heap);
    if (!s.heaps.empty()) {
        std::string heaps;
        for (const heap_entry& h : s.heaps)
            heaps += (heaps.empty() ? "" : ", ") + h.name + " " + text::human_bytes(h.shallow_bytes) + " in " +
                     text::grouped(h.objects) + " objects";
        if (!s.heap_focus.empty())
            heaps += "; suspects and retainers are the " + s.heap_focus + " heap's, the others' objects given";
        out += fact("Heaps", heaps);
    }
    out += fact("Dump", (c.dump_id.empty() ? "" : c.dump_id + ", ") + s.format + ", " +
                            text::human_bytes(s.file_bytes) + (s.file.empty() ? "" : ", " + s.file));
    out += fact("Layout", s.layout + (s.layout_inferred ? " (inferred from object addresses)" : " (assumed)"));
    out += "</dl>\n";
    for (const problem_report& p : r.problems)
        out += std::string("<p class=\"problem\">") + (p.truncation ? "Warning: " : "Error: ") + escape(p.message) +
               text::fmt(" (at file offset %llu)</p>\n", static_cast<unsigned long long>(p.offset));
    return out + "</header>\n";
}

std::string path_list(const gc_path& path) {
    std::string out = "<ol class=\"path\">";
    const std::string arrow = " \u2192 ";
    std::string t = path_text(path);
    for (std::size_t from = 0;;) {
        const std::size_t at = t.find(arrow, from);
        out += "<li><code>" + escape(t.substr(from, at == std::string::npos ? std::string::npos : at - from)) +
               "</code></li>";
        if (at == std::string::npos) break;
        from = at + arrow.size();
    }
    return out + "</ol>\n";
}

std::string groups(const std::vector<accumulated_class>& list) {
    std::string out = "<ul class=\"groups\">";
    for (const accumulated_class& a : list)
        out += "<li>" + escape(text::grouped(a.count)) + " × " + code(a.class_name) + " (" +
               escape(text::human_bytes(a.retained_bytes)) + ")</li>";
    return out + "</ul>\n";
}

std::string suspect_card(const leak_suspect& s, unsigned n) {
    const std::string amount = text::human_bytes(s.retained_bytes) + " (" + text::fmt("%.1f%%", 100 * s.share) + ")";
    std::string out = text::fmt("<article class=\"suspect\" id=\"suspect-%u\"><h3>Suspect %u</h3>\n<p>", n, n);
    if (s.is_class) {
        out += escape(text::grouped(s.instances)) + " instances of " + code(s.suspect.class_name) + " retain " +
               strong(amount) + " of the reachable heap together; none of them is large alone.</p>\n";
        if (!s.held_by.empty()) out += "<p>They are held by:</p>" + groups(s.held_by);
        if (!s.biggest.empty()) {
            out += "<p>The biggest:</p><ul class=\"groups\">";
            for (const dominator_entry& b : s.biggest)
                out += "<li>" + code(b.class_name) + " " + escape(hex_id(b.id)) + " (" +
                       escape(text::human_bytes(b.retained_bytes)) + ")</li>";
            out += "</ul>\n";
        }
    } else {
        out += "One instance of " + code(s.suspect.class_name) + " <span class=\"id\">" + escape(hex_id(s.suspect.id)) +
               "</span> retains " + strong(amount) + " of the reachable heap.</p>\n<p>";
        if (s.accumulation.id == s.suspect.id)
            out += "The memory accumulates in this object itself";
        else
            out += "The memory accumulates in one instance of " + code(s.accumulation.class_name) +
                   " <span class=\"id\">" + escape(hex_id(s.accumulation.id)) + "</span>, which retains " +
                   escape(text::human_bytes(s.accumulation.retained_bytes));
        if (s.chain_length > 1) out += ", the head of a chain of " + escape(text::grouped(s.chain_length));
        out += ".</p>\n";
        if (!s.accumulated.empty()) out += "<p>What accumulates there:</p>" + groups(s.accumulated);
    }
    out += std::string("<p>") + (s.is_class ? "Path from a GC root to the biggest:" : "Path from a GC root:") + "</p>" +
           path_list(s.path);
    if (!s.allocated_at.empty()) {
        out += "<p>Where these objects were allocated (heapd's sampling agent):</p><ul class=\"sites\">";
        for (const allocation_site_entry& a : s.allocated_at) {
            out += "<li>" + code(a.class_name) + " allocated at " + code(a.origin) + ": " +
                   escape(text::round_percent(100 * a.share)) + " of its sampled live bytes (" +
                   escape(text::human_bytes(a.live_bytes)) + " estimated)";
            if (!a.frames.empty()) {
                out += "<details><summary>stack</summary><ol class=\"stack\">";
                for (const std::string& f : a.frames) out += "<li><code>" + escape(f) + "</code></li>";
                out += "</ol></details>";
            }
            out += "</li>";
        }
        out += "</ul>\n";
    }
    return out + "</article>\n";
}

// LeakCanary's watched objects still in the heap: the app's own leaks, before the suspects.
std::string watched_section(const retention_report& t) {
    if (t.watched.empty()) return "";
    std::string out =
        "<section id=\"watched\"><h2>Watched by LeakCanary and still in the heap</h2>\n<p>The app told LeakCanary "
        "these objects should be gone.</p>\n";
    for (const watched_object& w : t.watched) {
        out += "<article class=\"suspect\"><h3>" + escape(w.object.class_name) + " " + escape(hex_id(w.object.id)) +
               ", " + escape(text::human_bytes(w.object.retained_bytes)) + " retained</h3>\n";
        if (!w.description.empty()) out += "<p>" + escape(w.description) + "</p>\n";
        if (!w.key.empty()) out += "<p>Key " + escape(w.key) + "</p>\n";
        if (!w.reachable)
            out += "<p>No strong reference holds it any more: gone at the next GC.</p>\n";
        else
            out += path_list(w.path);
        if (w.only_binder_held)
            out +=
                "<p>Held only through a Binder that a JNI global root holds (the system's handle on a service): "
                "LeakCanary counts no leak once such roots are excluded.</p>\n";
        out += "</article>\n";
    }
    return out + "</section>\n";
}

std::string suspects_section(const analysis_report& r) {
    const retention_report& t = r.retention;
    if (!t.computed) return "";
    std::string out = watched_section(t) +
                      "<section id=\"suspects\"><h2>Leak suspects</h2>\n<p>Objects, or all instances of a class, that "
                      "retain at least " +
                      text::fmt("%.0f%%", 100 * t.suspect_threshold) + " of the reachable " +
                      (r.summary.heap_focus.empty() ? std::string("heap") : escape(r.summary.heap_focus) + " heap") +
                      ".</p>\n";
    if (r.allocations.joined)
        out += "<p>Allocation sites from heapd's agent: " + escape(text::grouped(r.allocations.samples)) +
               " samples over " + text::fmt("%.0f", r.allocations.seconds) + " s, one per " +
               escape(text::human_bytes(static_cast<std::uint64_t>(r.allocations.interval))) + ".</p>\n";
    if (t.leak_suspects.empty()) out += "<p>None.</p>\n";
    unsigned n = 0;
    for (const leak_suspect& s : t.leak_suspects) out += suspect_card(s, ++n);
    return out + "</section>\n";
}

std::string tree_section(const analysis_report& r) {
    const retention_report& t = r.retention;
    if (!t.computed || t.tree.empty()) return "";
    return "<section id=\"tree\"><h2>Dominator tree</h2>\n<p>Each ring holds what the ring inside keeps alive; "
           "the angle is the retained size. Objects retaining less than " +
           text::fmt("%.1f%%", 100 * t.tree_min_share) +
           " of the heap are drawn together by class (\"1,200 × byte[]\"). Click to zoom in, click the centre to zoom "
           "out.</p>\n"
           "<nav id=\"tree-crumbs\"></nav><div id=\"tree-view\" class=\"chart\"></div>\n"
           "<p class=\"noscript-note\">The picture needs JavaScript; the tables below hold the same retainers.</p>\n"
           "</section>\n";
}

json tree_data(const retention_report& t) {
    std::set<std::uint64_t> marked;
    for (const leak_suspect& s : t.leak_suspects) {
        marked.insert(s.suspect.id);
        if (!s.is_class) marked.insert(s.accumulation.id);
    }
    json nodes = json::array();
    for (const tree_node& n : t.tree) {
        json e = {{"id", n.others ? std::string() : hex_id(n.id)},
                  {"class", n.others == 0          ? n.class_name
                            : n.class_name.empty() ? text::grouped(n.others) + " others"
                                                   : text::grouped(n.others) + " \u00d7 " + n.class_name},
                  {"shallow", n.shallow_bytes},
                  {"retained", n.retained_bytes},
                  {"parent", n.parent},
                  {"others", n.others}};
        if (n.others == 0 && marked.count(n.id)) e["suspect"] = 1;
        nodes.push_back(std::move(e));
    }
    return {{"total", t.reachable_bytes}, {"nodes", std::move(nodes)}};
}

std::string history_section(const html_context& c, json& data) {
    if (c.history.size() < 2) return "";
    json points = json::array();
    html::table t("history-table", {"Dump", "Time", "Trigger", "Heap", "Top suspect"}, false);
    for (const history_point& p : c.history) {
        json suspects = json::object();
        for (const auto& [name, bytes] : p.suspects) suspects[name] = bytes;
        points.push_back({{"label", p.label},
                          {"time_ms", p.time_ms},
                          {"trigger", p.trigger},
                          {"heap", p.heap_bytes},
                          {"suspects", std::move(suspects)}});
        t.row({html::text(p.label),
               html::number(text::utc_time(static_cast<std::uint64_t>(p.time_ms)), static_cast<double>(p.time_ms)),
               html::text(p.trigger), html::number(text::human_bytes(p.heap_bytes), static_cast<double>(p.heap_bytes)),
               html::text(p.suspects.empty() ? "none"
                                             : p.suspects[0].first + " " + text::human_bytes(p.suspects[0].second))});
    }
    data["history"] = std::move(points);
    return "<section id=\"history\"><h2>This JVM's dumps</h2>\n<div id=\"history-chart\" class=\"chart\"></div>\n" +
           t.html() + "</section>\n";
}

}  // namespace

std::string render_html(const analysis_report& r, const html_context& c) {
    json data = json::object();
    if (r.retention.computed && !r.retention.tree.empty()) data["tree"] = tree_data(r.retention);
    std::string body = header(r, c) + suspects_section(r) + tree_section(r) + html::histogram_section(r) +
                       html::retention_tables(r) + html::waste_section(r) + html::off_heap_section(r) +
                       html::threads_section(r) + html::roots_section(r) + history_section(c, data);
    if (c.growth) {
        data["growth"] = html::growth_data(*c.growth);
        body += "<section id=\"growth\"><h2>Since the previous dump" +
                (c.previous_dump.empty() ? std::string() : " (" + escape(c.previous_dump) + ")") + "</h2>\n" +
                html::growth_section(*c.growth, "since-") + "</section>\n";
    }
    body += "<footer>heapd report</footer>\n";
    const std::string title = c.command_line.empty() ? r.summary.file : main_of(c.command_line);
    return html::page("heapd: " + title, body, data);
}

result<std::string> save_html(const std::string& path, std::string_view page) {
    if (auto written = write_file_atomic(path, page, {0600}); !written)
        return fail(written.error().code, path + ": " + written.error().message);
    return "HTML report written to " + path + " (" + text::human_bytes(page.size()) + ")";
}

}  // namespace report
}  // namespace heapd
