// The diff of two dumps as text: both heaps' totals, what grew most, then the classes that grew and shrank.
#include <cstdlib>
#include <string>

#include "base/safe_text.h"
#include "formats/report/line_safe_report.h"
#include "formats/report/quantities.h"
#include "formats/report/report_text.h"

namespace heapd {
inline namespace report {
namespace {

using text::clock_text;
using text::fmt;
using text::rows;

// |d| without overflow, INT64_MIN included.
std::uint64_t magnitude(std::int64_t d) {
    return d < 0 ? 0 - static_cast<std::uint64_t>(d) : static_cast<std::uint64_t>(d);
}

// "+1,234", "-5", "0".
std::string signed_count(std::int64_t d) { return (d > 0 ? "+" : d < 0 ? "-" : "") + text::grouped(magnitude(d)); }

// "+1.50 MiB", "-312 B", "0 B".
std::string signed_bytes(std::int64_t d) { return (d > 0 ? "+" : d < 0 ? "-" : "") + text::human_bytes(magnitude(d)); }

// after against before: "+12.5%", "-3.0%", or "new" when there was nothing before.
std::string percent(std::uint64_t before, std::uint64_t after) {
    if (before == 0) return after == 0 ? "0.0%" : "new";
    double b = static_cast<double>(before);
    return fmt("%+.1f%%", 100.0 * (static_cast<double>(after) - b) / b);
}

// after - before, held at the int64 limits when it does not fit.
std::int64_t delta(std::uint64_t before, std::uint64_t after) {
    if (after >= before) return static_cast<std::int64_t>(std::min<std::uint64_t>(after - before, INT64_MAX));
    return before - after > INT64_MAX ? INT64_MIN : -static_cast<std::int64_t>(before - after);
}

void diff_header(std::string& out, const diff_report& r) {
    out += "heapd diff: " + (r.before.file.empty() ? "<before>" : r.before.file) + " -> " +
           (r.after.file.empty() ? "<after>" : r.after.file) + "\n";
    for (const diff_side* s : {&r.before, &r.after}) {
        std::string line = fmt("  %-8s ", s == &r.before ? "Before" : "After");
        if (s->timestamp_ms != 0) line += text::utc_time(s->timestamp_ms) + ": ";
        line += text::human_bytes(s->shallow_bytes) + " in " + text::grouped(s->objects) + " objects of " +
                text::grouped(s->classes) + " classes";
        if (r.retained) line += ", " + text::human_bytes(s->reachable_bytes) + " reachable";
        out += line + "\n";
    }
    std::string change = "  Change   heap " + signed_bytes(delta(r.before.shallow_bytes, r.after.shallow_bytes)) +
                         " (" + percent(r.before.shallow_bytes, r.after.shallow_bytes) + "), " +
                         signed_count(delta(r.before.objects, r.after.objects)) + " objects";
    if (r.retained)
        change += ", reachable " + signed_bytes(delta(r.before.reachable_bytes, r.after.reachable_bytes)) + " (" +
                  percent(r.before.reachable_bytes, r.after.reachable_bytes) + ")";
    if (r.before.timestamp_ms != 0 && r.after.timestamp_ms >= r.before.timestamp_ms)
        change += ", " + clock_text(r.after.timestamp_ms - r.before.timestamp_ms) + " apart";
    out += change + "\n";
}

void diff_rows(std::string& out, const char* title, const char* order, const std::vector<class_diff_entry>& list,
               std::uint64_t total, bool retained, unsigned top) {
    unsigned n = rows(list.size(), top);
    if (n == 0) return;
    out +=
        fmt("\n%s (top %u of %s class%s, %s)\n", title, n, text::grouped(total).c_str(), total == 1 ? "" : "es", order);
    out += fmt("  %4s %12s %12s %11s %11s %11s  %s\n", "#", "+Instances", "Instances", "+Shallow", "Shallow",
               retained ? "+Retained" : "", "Class");
    for (unsigned i = 0; i < n; ++i) {
        const class_diff_entry& e = list[i];
        out += fmt("  %4u %12s %12s %11s %11s %11s  %s%s\n", i + 1, signed_count(e.instances_delta).c_str(),
                   text::grouped(e.instances_after).c_str(), signed_bytes(e.shallow_delta).c_str(),
                   text::human_bytes(e.shallow_after).c_str(), retained ? signed_bytes(e.retained_delta).c_str() : "",
                   e.class_name.c_str(),
                   e.added     ? " (new)"
                   : e.removed ? " (gone)"
                               : "");
    }
}

}  // namespace

std::string render_text(const diff_report& report, const text_options& options) {
    const diff_report r = line_safe_copy(report);
    std::string out;
    diff_header(out, r);
    if (!r.notes.empty()) {
        out += "\nWarnings\n";
        for (const std::string& n : r.notes) out += "  ! " + n + "\n";
    }
    if (r.grew.empty()) {
        out += "\nNothing grew: no class has more bytes or instances than before.\n";
    } else {
        const class_diff_entry& g = r.grew.front();
        out += "\nGrew most: " + g.class_name + (g.added ? " (new)" : "") + "\n  " + signed_count(g.instances_delta) +
               " instances (" + percent(g.instances_before, g.instances_after) + "), " + signed_bytes(g.shallow_delta) +
               " shallow (" + percent(g.shallow_before, g.shallow_after) + ")";
        if (r.retained)
            out += ", " + signed_bytes(g.retained_delta) + " retained (" +
                   percent(g.retained_before, g.retained_after) + ")";
        out += "\n";
    }
    diff_rows(out, "Grew", "most shallow bytes gained first", r.grew, r.grew_classes, r.retained, options.top);
    diff_rows(out, "Shrank", "most shallow bytes lost first", r.shrank, r.shrank_classes, r.retained, options.top);
    out += "\n  " + text::grouped(r.unchanged_classes) + (r.unchanged_classes == 1 ? " class" : " classes") +
           " unchanged\n";
    return terminal_safe(out);
}

}  // namespace report
}  // namespace heapd
