#include "formats/sites/cpu_ranking.h"

#include <algorithm>
#include <map>

#include "formats/sites/site_ranking.h"

namespace heapd::sites {

cpu_report rank_cpu(const allocation_profile& p, int depth, unsigned top) {
    cpu_report r;
    r.agent = p.agent_version;
    r.period_ms = p.cpu_period_ms;
    r.seconds = p.cpu_seconds;
    r.ticks = p.cpu_ticks;
    r.samples = p.cpu_samples;
    r.dropped = p.cpu_dropped;
    r.depth = depth > 0 ? depth : p.cpu_depth;
    // Stacks are counted by their frames' indices; only the rows shown are spelled out, so what
    // the answer's names expand to is bounded by what is shown (and by max_table_text_bytes).
    using frames_key = std::vector<std::pair<std::uint32_t, std::int32_t>>;
    std::map<frames_key, std::uint64_t> counts;
    for (const cpu_trace_entry& t : p.cpu_traces) {
        frames_key key;
        for (std::size_t i = 0; i < t.frames.size() && static_cast<int>(i) < r.depth; ++i)
            key.emplace_back(t.frames[i].method, t.frames[i].line);
        counts[key] += t.count;
    }
    std::vector<std::pair<const frames_key*, std::uint64_t>> ranked;
    ranked.reserve(counts.size());
    for (const auto& [key, count] : counts) ranked.emplace_back(&key, count);
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    double accumulated = 0;
    std::size_t text_bytes = 0;
    for (const auto& [key, count] : ranked) {
        cpu_row row{{}, count, 0, 0};
        row.self = r.samples > 0 ? static_cast<double>(count) / static_cast<double>(r.samples) : 0;
        accumulated += row.self;
        row.accumulated = accumulated;
        if ((top != 0 && r.rows.size() >= top) || text_bytes >= max_table_text_bytes) {
            r.cut_at_size = r.cut_at_size || text_bytes >= max_table_text_bytes;
            ++r.rows_left_out;
            continue;
        }
        for (const auto& [method, line] : *key) {
            row.frames.push_back(frame_text(p.cpu_methods, {method, line}));  // the CPU samples' own table
            text_bytes += row.frames.back().size();
        }
        r.rows.push_back(std::move(row));
    }
    return r;
}

}  // namespace heapd::sites
