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

std::string frame_text(const allocation_profile& profile, const profile_frame& frame) {
    const profile_method& m = profile.methods[frame.method];
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
    std::map<row_key, site_row> rows;
    for (const profile_site& s : profile.sites) {
        row_key key = key_of(s, options);
        auto [it, fresh] = rows.try_emplace(key);
        site_row& r = it->second;
        if (fresh) {
            if (key.klass >= 0) r.klass = profile.classes[s.klass];
            for (const auto& [method, line] : key.frames) {
                if (line == -3) {
                    const profile_method& m = profile.methods[method];
                    r.frames.push_back(m.klass + "." + m.name);
                } else {
                    r.frames.push_back(frame_text(profile, {method, line}));
                }
            }
        }
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
    std::vector<site_row> all;
    all.reserve(rows.size());
    for (auto& [key, row] : rows) all.push_back(std::move(row));
    // Ties keep the order of the keys (class, then frames): the same table for the same profile.
    std::stable_sort(all.begin(), all.end(), [&](const site_row& a, const site_row& b) {
        double x = ranking_bytes(a, options.order), y = ranking_bytes(b, options.order);
        if (x != y) return x > y;
        return ranking_bytes(a, options.order == ranking::live ? ranking::allocated : ranking::live) >
               ranking_bytes(b, options.order == ranking::live ? ranking::allocated : ranking::live);
    });
    const double total = options.order == ranking::live ? t.live_bytes : t.bytes;
    double accumulated = 0;
    for (site_row& r : all) {
        const double share = total > 0 ? ranking_bytes(r, options.order) / total : 0;
        accumulated += share;
        const bool shown = share >= options.cutoff && (options.top == 0 || t.rows.size() < options.top);
        if (!shown) {
            ++t.rows_left_out;
            continue;
        }
        r.self = share;
        r.accumulated = accumulated;
        t.rows.push_back(std::move(r));
    }
    return t;
}

}  // namespace heapd::sites
