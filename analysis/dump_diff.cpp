#include "analysis/dump_diff.h"

#include <algorithm>
#include <limits>
#include <map>

namespace heapd {
inline namespace analysis {
namespace {

// after - before exactly, as a sign and a magnitude, so no 64-bit value can overflow it.
struct change {
    bool negative = false;
    std::uint64_t magnitude = 0;
};

change change_of(std::uint64_t before, std::uint64_t after) {
    return after >= before ? change{false, after - before} : change{true, before - after};
}

// -1, 0 or 1 as a is below, equal to or above b.
int compare(change a, change b) {
    if (a.negative != b.negative) return a.negative ? -1 : 1;
    if (a.magnitude == b.magnitude) return 0;
    return (a.magnitude > b.magnitude) != a.negative ? 1 : -1;
}

std::int64_t saturated(change c) {
    constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (!c.negative) return static_cast<std::int64_t>(std::min(c.magnitude, max));
    if (c.magnitude > max) return std::numeric_limits<std::int64_t>::min();
    return -static_cast<std::int64_t>(c.magnitude);
}

std::uint64_t add(std::uint64_t a, std::uint64_t b) {
    return a > std::numeric_limits<std::uint64_t>::max() - b ? std::numeric_limits<std::uint64_t>::max() : a + b;
}

// The growth key: shallow bytes, instances, retained bytes (compared in that order).
struct growth {
    change shallow, instances, retained;
};

growth growth_of(const class_diff_entry& e) {
    return {change_of(e.shallow_before, e.shallow_after), change_of(e.instances_before, e.instances_after),
            change_of(e.retained_before, e.retained_after)};
}

int compare(const growth& a, const growth& b) {
    if (int c = compare(a.shallow, b.shallow)) return c;
    if (int c = compare(a.instances, b.instances)) return c;
    return compare(a.retained, b.retained);
}

diff_side side_of(const analysis_report& r, bool retained) {
    const summary_report& s = r.summary;
    diff_side d{s.file,          s.timestamp_ms, s.layout, add(add(s.instances, s.object_arrays), s.primitive_arrays),
                s.shallow_bytes, s.classes,      0,        0};
    if (retained) {
        d.reachable_objects = r.retention.reachable_objects;
        d.reachable_bytes = r.retention.reachable_bytes;
    }
    return d;
}

std::string name_of(const diff_side& s, const char* fallback) { return s.file.empty() ? fallback : s.file; }

void add_notes(diff_report& d, const analysis_report& before, const analysis_report& after) {
    const std::string b = name_of(d.before, "the earlier dump"), a = name_of(d.after, "the later dump");
    if (before.summary.id_size != after.summary.id_size || d.before.layout != d.after.layout)
        d.notes.push_back("the dumps' object layouts differ (" + d.before.layout + ", " + d.after.layout +
                          "): they may not come from the same JVM, and sizes do not compare");
    if (d.before.timestamp_ms != 0 && d.after.timestamp_ms != 0 && d.after.timestamp_ms < d.before.timestamp_ms)
        d.notes.push_back(a + " was taken before " + b + ": growth here is shrinkage in time");
    if (before.retention.computed != after.retention.computed)
        d.notes.push_back("retained sizes are known for only one of the dumps: they are left out");
    for (const auto* r : {&before, &after}) {
        if (r->problems.empty()) continue;
        d.notes.push_back((r == &before ? b : a) + " could not be read whole (" + r->problems.front().message +
                          "): its counts are incomplete");
    }
}

}  // namespace

analysis_options diff_analysis_options(const std::string& file_name, bool retained) {
    analysis_options o;
    o.top = 0;
    o.largest = 0;
    o.threads = false;
    o.retained = retained;
    o.file_name = file_name;
    return o;
}

diff_report diff_analyses(const analysis_report& before, const analysis_report& after, unsigned top) {
    diff_report d;
    d.retained = before.retention.computed && after.retention.computed;
    d.before = side_of(before, d.retained);
    d.after = side_of(after, d.retained);
    add_notes(d, before, after);

    std::map<std::string, class_diff_entry> by_name;
    auto row = [&](const std::string& name) -> class_diff_entry& {
        class_diff_entry& e = by_name[name];
        e.class_name = name;
        return e;
    };
    for (const histogram_entry& h : before.histogram) {
        class_diff_entry& e = row(h.class_name);
        e.instances_before = add(e.instances_before, h.instances);
        e.shallow_before = add(e.shallow_before, h.shallow_bytes);
    }
    for (const histogram_entry& h : after.histogram) {
        class_diff_entry& e = row(h.class_name);
        e.instances_after = add(e.instances_after, h.instances);
        e.shallow_after = add(e.shallow_after, h.shallow_bytes);
    }
    if (d.retained) {
        for (const retained_class_entry& c : before.retention.retained_by_class) {
            class_diff_entry& e = row(c.class_name);
            e.retained_before = add(e.retained_before, c.retained_bytes);
        }
        for (const retained_class_entry& c : after.retention.retained_by_class) {
            class_diff_entry& e = row(c.class_name);
            e.retained_after = add(e.retained_after, c.retained_bytes);
        }
    }

    const growth none{};
    std::vector<std::pair<growth, class_diff_entry>> grew, shrank;
    for (auto& [name, e] : by_name) {
        growth g = growth_of(e);
        e.instances_delta = saturated(g.instances);
        e.shallow_delta = saturated(g.shallow);
        e.retained_delta = saturated(g.retained);
        e.added = e.instances_before == 0 && e.instances_after > 0;
        e.removed = e.instances_before > 0 && e.instances_after == 0;
        int c = compare(g, none);
        if (c > 0)
            grew.emplace_back(g, std::move(e));
        else if (c < 0)
            shrank.emplace_back(g, std::move(e));
        else
            ++d.unchanged_classes;
    }
    // Names break ties; by_name already holds them in order, so a stable sort keeps it.
    std::stable_sort(grew.begin(), grew.end(),
                     [](const auto& a, const auto& b) { return compare(a.first, b.first) > 0; });
    std::stable_sort(shrank.begin(), shrank.end(),
                     [](const auto& a, const auto& b) { return compare(a.first, b.first) < 0; });
    d.grew_classes = grew.size();
    d.shrank_classes = shrank.size();
    auto keep = [top](std::vector<std::pair<growth, class_diff_entry>>& from, std::vector<class_diff_entry>& to) {
        std::size_t n = top == 0 ? from.size() : std::min<std::size_t>(from.size(), top);
        for (std::size_t i = 0; i < n; ++i) to.push_back(std::move(from[i].second));
    };
    keep(grew, d.grew);
    keep(shrank, d.shrank);
    return d;
}

}  // namespace analysis
}  // namespace heapd
