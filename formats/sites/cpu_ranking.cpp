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
    // The frames as text: methods are listed by the CPU samples' own table.
    allocation_profile names;
    names.methods = p.cpu_methods;
    std::map<std::vector<std::string>, std::uint64_t> counts;
    for (const cpu_trace_entry& t : p.cpu_traces) {
        std::vector<std::string> frames;
        for (std::size_t i = 0; i < t.frames.size() && static_cast<int>(i) < r.depth; ++i)
            frames.push_back(frame_text(names, t.frames[i]));
        counts[frames] += t.count;
    }
    std::vector<cpu_row> rows;
    for (auto& [frames, count] : counts) rows.push_back({frames, count, 0, 0});
    std::stable_sort(rows.begin(), rows.end(), [](const cpu_row& a, const cpu_row& b) { return a.count > b.count; });
    double accumulated = 0;
    for (cpu_row& row : rows) {
        row.self = r.samples > 0 ? static_cast<double>(row.count) / static_cast<double>(r.samples) : 0;
        accumulated += row.self;
        row.accumulated = accumulated;
        if (top != 0 && r.rows.size() >= top) {
            ++r.rows_left_out;
            continue;
        }
        r.rows.push_back(std::move(row));
    }
    return r;
}

}  // namespace heapd::sites
