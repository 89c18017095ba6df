#include "formats/sites/site_ranking.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace heapd::sites {
namespace {

// The key of a row: the class (or none) and the frames, as indices.
struct row_key {
    std::int64_t klass;
    std::vector<std::pair<std::uint32_t, std::int32_t>> frames;
    bool operator<(const row_key& o) const { return std::tie(klass, frames) < std::tie(o.klass, o.frames); }
};

row_key key_of(const profile_site& s, const table_options& options) {
    row_key k{s.klass, {}};
    switch (options.by) {
    case grouping::site: {
        const std::size_t n =
            std::min<std::size_t>(s.frames.size(), static_cast<std::size_t>(std::max(options.depth, 0)));
        for (std::size_t i = 0; i < n; ++i) k.frames.emplace_back(s.frames[i].method, s.frames[i].line);
        break;
    }
    case grouping::method:
        k.klass = -1;
        if (!s.frames.empty()) k.frames.emplace_back(s.frames[0].method, -3);  // the method, whatever the line
        break;
    case grouping::klass: break;
    }
    return k;
}

double ranking_bytes(const site_row& r, ranking order) { return order == ranking::live ? r.live_bytes : r.bytes; }

}  // namespace

const char* grouping_name(grouping g) {
    switch (g) {
    case grouping::site: return "site";
    case grouping::method: return "method";
    case grouping::klass: return "class";
    }
    return "?";
}

const char* ranking_name(ranking r) { return r == ranking::live ? "live" : "allocated"; }

std::string frame_text(const std::vector<profile_method>& methods, const profile_frame& frame) {
    const profile_method& m = methods[frame.method];
    std::string where;
    if (frame.line == -2)
        where = "Native Method";
    else if (m.file.empty())
        where = "Unknown Source";
    else if (frame.line < 0)
        where = m.file;
    else
        where = m.file + ":" + std::to_string(frame.line);
    return m.klass + "." + m.name + "(" + where + ")";
}

sites_report rank_sites(const allocation_profile& profile, const table_options& options, bool collected_first) {
    sites_report t;
    t.agent = profile.agent_version;
    t.interval = profile.interval;
    t.sampled_depth = profile.depth;
    t.seconds = profile.seconds;
    t.samples = profile.samples;
    t.dropped = {profile.dropped_ring, profile.dropped_sites, profile.dropped_unnamed, profile.dropped_live};
    t.agent_memory_bytes = profile.memory_bytes;
    t.collected_first = collected_first;
    t.by = grouping_name(options.by);
    t.order = ranking_name(options.order);
    t.depth = options.by == grouping::site ? options.depth : 0;
    t.cutoff = options.cutoff;
    // Rows are grouped and ranked by indices; only the rows shown are spelled out, so what the
    // answer's names expand to is bounded by what is shown (and by max_table_text_bytes).
    std::map<row_key, site_row> rows;
    for (const profile_site& s : profile.sites) {
        site_row& r = rows[key_of(s, options)];
        r.live_bytes += s.live_bytes;
        r.live_objects += s.live_objects;
        r.bytes += s.bytes;
        r.objects += s.objects;
        r.samples += s.samples;
        t.live_bytes += s.live_bytes;
        t.live_objects += s.live_objects;
        t.bytes += s.bytes;
        t.objects += s.objects;
    }
    std::vector<std::pair<const row_key*, site_row*>> all;
    all.reserve(rows.size());
    for (auto& [key, row] : rows) all.emplace_back(&key, &row);
    // Ties keep the order of the keys (class, then frames): the same table for the same profile.
    const ranking other = options.order == ranking::live ? ranking::allocated : ranking::live;
    std::stable_sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
        double x = ranking_bytes(*a.second, options.order), y = ranking_bytes(*b.second, options.order);
        if (x != y) return x > y;
        return ranking_bytes(*a.second, other) > ranking_bytes(*b.second, other);
    });
    const double total = options.order == ranking::live ? t.live_bytes : t.bytes;
    double accumulated = 0;
    std::size_t text_bytes = 0;
    for (auto& [key, row] : all) {
        const double share = total > 0 ? ranking_bytes(*row, options.order) / total : 0;
        accumulated += share;
        const bool shown = share >= options.cutoff && (options.top == 0 || t.rows.size() < options.top) &&
                           text_bytes < max_table_text_bytes;
        if (!shown) {
            t.cut_at_size = t.cut_at_size || text_bytes >= max_table_text_bytes;
            ++t.rows_left_out;
            continue;
        }
        row->self = share;
        row->accumulated = accumulated;
        if (key->klass >= 0) row->klass = profile.classes[static_cast<std::size_t>(key->klass)];
        text_bytes += row->klass.size();
        for (const auto& [method, line] : key->frames) {
            if (line == -3) {
                const profile_method& m = profile.methods[method];
                row->frames.push_back(m.klass + "." + m.name);
            } else {
                row->frames.push_back(frame_text(profile.methods, {method, line}));
            }
            text_bytes += row->frames.back().size();
        }
        t.rows.push_back(std::move(*row));
    }
    return t;
}

}  // namespace heapd::sites
