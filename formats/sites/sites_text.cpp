#include "formats/sites/sites_text.h"

#include <cmath>

#include "base/safe_text.h"
#include "formats/report/report_text.h"
#include "formats/report/text_format.h"

namespace heapd::sites {
namespace {

std::uint64_t whole(double v) { return static_cast<std::uint64_t>(std::llround(std::max(v, 0.0))); }

std::string dropped_text(const allocation_profile& p) {
    const std::uint64_t all = p.dropped_ring + p.dropped_sites + p.dropped_unnamed;
    if (all == 0 && p.dropped_live == 0) return "none";
    std::string out;
    auto add = [&out](std::uint64_t n, const char* why) {
        if (n == 0) return;
        out += (out.empty() ? "" : ", ") + grouped(n) + " " + why;
    };
    add(p.dropped_ring, "with no free slot");
    add(p.dropped_sites, "past the site table's cap");
    add(p.dropped_unnamed, "with a class or method that could not be named");
    add(p.dropped_live, "counted as allocated but not watched for liveness");
    return out;
}

}  // namespace

std::string sites_text(const allocation_profile& p, const site_table& t, bool collected_first) {
    std::string out = text::fmt(
        "Allocation sites: %s samples in %.1f s, one per %s allocated per thread on average "
        "(JEP 331)\n",
        grouped(p.samples).c_str(), p.seconds, human_bytes(static_cast<std::uint64_t>(p.interval)).c_str());
    out += "Estimates: a sample of s bytes stands for s/p bytes and 1/p objects, p = 1 - exp(-s/interval)\n";
    out += collected_first ? "Live: still reachable after a full collection\n"
                           : "Live: not yet collected (no collection was forced)\n";
    out += "Dropped samples: " + dropped_text(p) + "\n";
    out += "Totals: live " + human_bytes(whole(t.live_bytes)) + " in " + grouped(whole(t.live_objects)) +
           " objects; allocated " + human_bytes(whole(t.bytes)) + " in " + grouped(whole(t.objects)) + " objects\n";
    out += std::string("By ") + grouping_name(t.by) +
           (t.by == grouping::site ? text::fmt(" (depth %d)", t.depth) : "") + ", ranked by " + ranking_name(t.order) +
           " bytes\n\n";
    out += text::fmt("%4s %6s %6s %11s %11s %11s %11s  %s\n", "rank", "self", "accum", "live bytes", "live objs",
                     "alloc bytes", "alloc objs", t.by == grouping::method ? "method" : "class");
    unsigned rank = 0;
    for (const site_row& r : t.rows) {
        ++rank;
        std::string what = terminal_safe(t.by == grouping::method && !r.frames.empty() ? r.frames.front() : r.klass);
        out += text::fmt("%4u %6s %6s %11s %11s %11s %11s  ", rank, text::percent_text(100 * r.self, 1).c_str(),
                         text::percent_text(100 * r.accumulated, 1).c_str(), human_bytes(whole(r.live_bytes)).c_str(),
                         grouped(whole(r.live_objects)).c_str(), human_bytes(whole(r.bytes)).c_str(),
                         grouped(whole(r.objects)).c_str());
        out += what + "\n";
        if (t.by == grouping::site)
            for (const std::string& f : r.frames) out += "          at " + terminal_safe(f) + "\n";
    }
    if (t.rows.empty()) out += "     (no sampled allocations)\n";
    if (t.rows_left_out > 0)
        out += text::fmt("     %s more below %s of the %s bytes\n", grouped(t.rows_left_out).c_str(),
                         text::percent_text(100 * t.cutoff, 2).c_str(), ranking_name(t.order));
    return out;
}

nlohmann::json sites_json(const allocation_profile& p, const site_table& t, bool collected_first) {
    nlohmann::json rows = nlohmann::json::array();
    for (const site_row& r : t.rows) {
        nlohmann::json row = {{"live_bytes", r.live_bytes},  {"live_objects", r.live_objects}, {"bytes", r.bytes},
                              {"objects", r.objects},        {"samples", r.samples},           {"self", r.self},
                              {"accumulated", r.accumulated}};
        if (t.by != grouping::method) row["class"] = r.klass;
        if (t.by == grouping::method) row["method"] = r.frames.empty() ? std::string() : r.frames.front();
        if (t.by == grouping::site) row["frames"] = r.frames;
        rows.push_back(std::move(row));
    }
    return {
        {"agent", p.agent_version},
        {"interval", p.interval},
        {"depth", p.depth},
        {"seconds", p.seconds},
        {"samples", p.samples},
        {"estimator", "poisson"},
        {"collected_first", collected_first},
        {"dropped",
         {{"no_slot", p.dropped_ring},
          {"site_cap", p.dropped_sites},
          {"unnamed", p.dropped_unnamed},
          {"not_watched", p.dropped_live}}},
        {"agent_memory_bytes", p.memory_bytes},
        {"by", grouping_name(t.by)},
        {"order", ranking_name(t.order)},
        {"cutoff", t.cutoff},
        {"totals",
         {{"live_bytes", t.live_bytes}, {"live_objects", t.live_objects}, {"bytes", t.bytes}, {"objects", t.objects}}},
        {"rows_left_out", t.rows_left_out},
        {"rows", std::move(rows)}};
}

}  // namespace heapd::sites
