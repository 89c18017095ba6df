// The HTML report's table sections (html_sections.h).
#include "formats/report/html_sections.h"

#include "base/hex_text.h"
#include "formats/report/html_writer.h"
#include "formats/report/quantities.h"
#include "formats/report/report_text.h"

namespace heapd {
inline namespace report {
namespace html {
cell bytes_cell(std::uint64_t b) { return number(text::human_bytes(b), static_cast<double>(b)); }
cell count_cell(std::uint64_t n) { return number(text::grouped(n), static_cast<double>(n)); }
cell delta_cell(std::int64_t d, bool bytes) {
    const std::uint64_t magnitude = d < 0 ? 0 - static_cast<std::uint64_t>(d) : static_cast<std::uint64_t>(d);
    return number((d < 0 ? "−" : "+") + (bytes ? text::human_bytes(magnitude) : text::grouped(magnitude)),
                  static_cast<double>(d));
}

std::string section(const char* id, const std::string& heading, const std::string& body) {
    return std::string("<section id=\"") + id + "\"><h2>" + escape(heading) + "</h2>\n" + body + "</section>\n";
}

std::string share_text(std::uint64_t part, std::uint64_t whole) {
    if (whole == 0) return "";
    return text::fmt("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string histogram_section(const analysis_report& r) {
    table t("histogram-table", {"Class", "Instances", "Shallow bytes", "Share"}, true);
    for (const histogram_entry& h : r.histogram)
        t.row({text(h.class_name), count_cell(h.instances), bytes_cell(h.shallow_bytes),
               number(share_text(h.shallow_bytes, r.summary.shallow_bytes), static_cast<double>(h.shallow_bytes))});
    return section("histogram", "Histogram (" + text::grouped(t.rows()) + " classes by shallow size)", t.html());
}

std::string retention_tables(const analysis_report& r) {
    const retention_report& rr = r.retention;
    if (!rr.computed) return "";
    table top("retainers-table", {"Class", "Id", "Shallow", "Retained", "Share"}, true);
    for (const dominator_entry& d : rr.dominators)
        top.row({text(d.class_name), text(hex_id(d.id)), bytes_cell(d.shallow_bytes), bytes_cell(d.retained_bytes),
                 number(share_text(d.retained_bytes, rr.share_base()), static_cast<double>(d.retained_bytes))});
    table by_class("retained-class-table", {"Class", "Retained", "Share"}, true);
    for (const retained_class_entry& c : rr.retained_by_class)
        by_class.row({text(c.class_name), bytes_cell(c.retained_bytes),
                      number(share_text(c.retained_bytes, rr.share_base()), static_cast<double>(c.retained_bytes))});
    return section("retainers", "Biggest retainers", top.html()) +
           section("retained-by-class", "Retained by class (nested instances counted once)", by_class.html());
}

std::string waste_section(const analysis_report& r) {
    const waste_report& w = r.waste;
    if (!w.computed) return "";
    std::string body = "<p>" + escape(text::human_bytes(w.saving_bytes)) + " could be saved (" +
                       share_text(w.saving_bytes, r.summary.shallow_bytes) + " of the heap).</p>\n";
    table kinds("waste-table", {"Kind", "Saving"}, false);
    kinds.row({text("Duplicate strings"), bytes_cell(w.duplicate_string_saving)});
    kinds.row({text("Empty and sparse collections"), bytes_cell(w.collection_saving)});
    kinds.row({text("Boxed primitives"), bytes_cell(w.boxed_saving)});
    kinds.row({text("Primitive arrays of zeros only"), bytes_cell(w.zero_array_saving)});
    body += kinds.html();
    if (!w.duplicate_strings_top.empty()) {
        table t("duplicates-table", {"Contents", "Length", "Copies", "Saving"}, true);
        for (const auto& d : w.duplicate_strings_top)
            t.row({text("\"" + d.content + "\""), count_cell(d.length), count_cell(d.copies),
                   bytes_cell(d.saving_bytes)});
        body += "<h3>Duplicate strings</h3>\n" + t.html();
    }
    if (!w.collections.empty()) {
        table t("collections-table", {"Class", "Count", "Empty", "Sparse", "Saving"}, true);
        for (const auto& c : w.collections)
            t.row({text(c.class_name), count_cell(c.count), count_cell(c.empty), count_cell(c.sparse),
                   bytes_cell(c.saving_bytes)});
        body += "<h3>Empty and sparse collections</h3>\n" + t.html();
    }
    if (!w.boxed.empty()) {
        table t("boxed-table", {"Class", "Count", "Bytes", "Distinct values", "Saving"}, true);
        for (const auto& b : w.boxed)
            t.row({text(b.class_name), count_cell(b.count), bytes_cell(b.bytes), count_cell(b.distinct_values),
                   bytes_cell(b.saving_bytes)});
        body += "<h3>Boxed primitives</h3>\n" + t.html();
    }
    if (!w.zero_arrays.empty()) {
        table t("zero-arrays-table", {"Type", "Count", "Bytes"}, true);
        for (const auto& z : w.zero_arrays) t.row({text(z.class_name), count_cell(z.count), bytes_cell(z.bytes)});
        body += "<h3>Primitive arrays of zeros only</h3>\n" + t.html();
    }
    return section("waste", "Waste", body);
}

std::string threads_section(const analysis_report& r) {
    if (r.threads.empty()) return "";
    std::string body;
    for (const thread_report& t : r.threads) {
        body += "<details class=\"thread\"><summary><code>" + escape("\"" + t.name + "\"") + "</code>";
        if (t.daemon && *t.daemon) body += " daemon";
        if (!t.state.empty()) body += " " + escape(t.state);
        body +=
            text::fmt(" <span class=\"frames\">(%zu frames)</span></summary>\n<ol class=\"stack\">", t.frames.size());
        for (const std::string& f : t.frames) body += "<li><code>" + escape(f) + "</code></li>";
        body += "</ol></details>\n";
    }
    return section("threads", "Threads (" + text::grouped(r.threads.size()) + ")", body);
}

std::string roots_section(const analysis_report& r) {
    if (r.summary.gc_roots.empty()) return "";
    table t("roots-table", {"Kind", "Roots"}, false);
    for (const auto& [kind, n] : r.summary.gc_roots) t.row({text(kind), count_cell(n)});
    std::string note;
    if (r.summary.class_roots_inferred != 0)
        note = "<p>And " + text::grouped(r.summary.class_roots_inferred) +
               " classes of the JDK's loaders taken as roots: the dump marks no class as one.</p>\n";
    return section("roots", "GC roots by kind", t.html() + note);
}

nlohmann::ordered_json growth_data(const diff_report& d) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    auto add = [&](const class_diff_entry& e) {
        const bool retained = d.retained;
        rows.push_back({{"class", e.class_name},
                        {"delta", retained ? e.retained_delta : e.shallow_delta},
                        {"before", retained ? e.retained_before : e.shallow_before},
                        {"after", retained ? e.retained_after : e.shallow_after}});
    };
    for (const auto& e : d.grew) add(e);
    for (const auto& e : d.shrank) add(e);
    return rows;
}

std::string growth_section(const diff_report& d, const std::string& id_prefix) {
    const char* measure = d.retained ? "Retained" : "Shallow";
    auto rows_of = [&](const std::vector<class_diff_entry>& list, const std::string& id) {
        table t(id_prefix + id,
                {"Class", "Instances before", "Instances after", "Instances Δ", std::string(measure) + " before",
                 std::string(measure) + " after", std::string(measure) + " Δ"},
                true);
        for (const class_diff_entry& e : list)
            t.row({text(e.class_name + (e.added     ? " (new)"
                                        : e.removed ? " (gone)"
                                                    : "")),
                   count_cell(e.instances_before), count_cell(e.instances_after), delta_cell(e.instances_delta, false),
                   bytes_cell(d.retained ? e.retained_before : e.shallow_before),
                   bytes_cell(d.retained ? e.retained_after : e.shallow_after),
                   delta_cell(d.retained ? e.retained_delta : e.shallow_delta, true)});
        return t.html();
    };
    std::string body = "<div id=\"growth-chart\" class=\"chart\"></div>\n";
    body += "<p>" + text::grouped(d.grew_classes) + " classes grew, " + text::grouped(d.shrank_classes) + " shrank, " +
            text::grouped(d.unchanged_classes) + " did not change.</p>\n";
    for (const std::string& n : d.notes) body += "<p class=\"note\">" + escape(n) + "</p>\n";
    if (!d.grew.empty()) body += "<h3>Grew</h3>\n" + rows_of(d.grew, "grew-table");
    if (!d.shrank.empty()) body += "<h3>Shrank</h3>\n" + rows_of(d.shrank, "shrank-table");
    return body;
}

}  // namespace html
}  // namespace report
}  // namespace heapd
