#include "formats/report/sites_report.h"

#include <cmath>

#include "base/safe_text.h"
#include "formats/report/quantities.h"
#include "formats/report/report_text.h"

namespace heapd {
inline namespace report {
namespace {

using json = nlohmann::ordered_json;

std::uint64_t whole(double v) { return static_cast<std::uint64_t>(std::llround(std::max(v, 0.0))); }

std::string dropped_text(const sites_dropped& d) {
    std::string out;
    auto add = [&out](std::uint64_t n, const char* why) {
        if (n != 0) out += (out.empty() ? "" : ", ") + text::grouped(n) + " " + why;
    };
    add(d.no_slot, "with no free slot");
    add(d.site_cap, "past the site table's cap");
    add(d.unnamed, "with a class or method that could not be named");
    add(d.not_watched, "counted as allocated but not watched for liveness");
    return out.empty() ? "none" : out;
}

}  // namespace

json to_json(const sites_report& r) {
    json rows = json::array();
    for (const site_row& row : r.rows) {
        json j = {{"live_bytes", row.live_bytes},  {"live_objects", row.live_objects}, {"bytes", row.bytes},
                  {"objects", row.objects},        {"samples", row.samples},           {"self", row.self},
                  {"accumulated", row.accumulated}};
        if (r.by != "method") j["class"] = row.klass;
        if (r.by == "method") j["method"] = row.frames.empty() ? std::string() : row.frames.front();
        if (r.by == "site") j["frames"] = row.frames;
        rows.push_back(std::move(j));
    }
    return {
        {"agent", r.agent},
        {"interval", r.interval},
        {"sampled_depth", r.sampled_depth},
        {"seconds", r.seconds},
        {"samples", r.samples},
        {"estimator", "poisson"},
        {"collected_first", r.collected_first},
        {"dropped",
         {{"no_slot", r.dropped.no_slot},
          {"site_cap", r.dropped.site_cap},
          {"unnamed", r.dropped.unnamed},
          {"not_watched", r.dropped.not_watched}}},
        {"agent_memory_bytes", r.agent_memory_bytes},
        {"by", r.by},
        {"order", r.order},
        {"depth", r.depth},
        {"cutoff", r.cutoff},
        {"totals",
         {{"live_bytes", r.live_bytes}, {"live_objects", r.live_objects}, {"bytes", r.bytes}, {"objects", r.objects}}},
        {"rows_left_out", r.rows_left_out},
        {"cut_at_size", r.cut_at_size},
        {"rows", std::move(rows)}};
}

result<sites_report> sites_report_from_json(const json& j) {
    try {
        sites_report r;
        r.agent = j.at("agent").get<std::string>();
        r.interval = j.at("interval").get<std::int64_t>();
        r.sampled_depth = j.at("sampled_depth").get<int>();
        r.seconds = j.at("seconds").get<double>();
        r.samples = j.at("samples").get<std::uint64_t>();
        const json& d = j.at("dropped");
        r.dropped = {d.at("no_slot").get<std::uint64_t>(), d.at("site_cap").get<std::uint64_t>(),
                     d.at("unnamed").get<std::uint64_t>(), d.at("not_watched").get<std::uint64_t>()};
        r.agent_memory_bytes = j.at("agent_memory_bytes").get<std::uint64_t>();
        r.collected_first = j.at("collected_first").get<bool>();
        r.by = j.at("by").get<std::string>();
        r.order = j.at("order").get<std::string>();
        if (r.by != "site" && r.by != "method" && r.by != "class")
            return fail(error_code::bad_value, "sites: by " + r.by);
        r.depth = j.at("depth").get<int>();
        r.cutoff = j.at("cutoff").get<double>();
        const json& t = j.at("totals");
        r.live_bytes = t.at("live_bytes").get<double>();
        r.live_objects = t.at("live_objects").get<double>();
        r.bytes = t.at("bytes").get<double>();
        r.objects = t.at("objects").get<double>();
        r.rows_left_out = j.at("rows_left_out").get<std::uint64_t>();
        r.cut_at_size = j.value("cut_at_size", false);
        for (const json& row : j.at("rows")) {
            site_row s;
            if (r.by == "method")
                s.frames.push_back(row.at("method").get<std::string>());
            else
                s.klass = row.at("class").get<std::string>();
            if (r.by == "site") s.frames = row.at("frames").get<std::vector<std::string>>();
            s.live_bytes = row.at("live_bytes").get<double>();
            s.live_objects = row.at("live_objects").get<double>();
            s.bytes = row.at("bytes").get<double>();
            s.objects = row.at("objects").get<double>();
            s.samples = row.at("samples").get<std::uint64_t>();
            s.self = row.at("self").get<double>();
            s.accumulated = row.at("accumulated").get<double>();
            r.rows.push_back(std::move(s));
        }
        return r;
    } catch (const json::exception& e) {
        return fail(error_code::bad_value, std::string("sites JSON: ") + e.what());
    }
}

std::string render_sites_text(const sites_report& r) {
    std::string out = text::fmt(
        "Allocation sites: %s samples in %.1f s, one per %s allocated per thread on average "
        "(JEP 331)\n",
        text::grouped(r.samples).c_str(), r.seconds,
        text::human_bytes(static_cast<std::uint64_t>(std::max<std::int64_t>(r.interval, 0))).c_str());
    out += "Estimates: a sample of s bytes stands for s/p bytes and 1/p objects, p = 1 - exp(-s/interval)\n";
    out += r.collected_first ? "Live: still reachable after a full collection\n"
                             : "Live: not yet collected (no collection was forced)\n";
    out += "Dropped samples: " + dropped_text(r.dropped) + "\n";
    out += "Totals: live " + text::human_bytes(whole(r.live_bytes)) + " in " + text::grouped(whole(r.live_objects)) +
           " objects; allocated " + text::human_bytes(whole(r.bytes)) + " in " + text::grouped(whole(r.objects)) +
           " objects\n";
    out += "By " + r.by + (r.by == "site" ? text::fmt(" (depth %d)", r.depth) : "") + ", ranked by " + r.order +
           " bytes\n\n";
    out += text::fmt("%4s %6s %6s %11s %11s %11s %11s  %s\n", "rank", "self", "accum", "live bytes", "live objs",
                     "alloc bytes", "alloc objs", r.by == "method" ? "method" : "class");
    unsigned rank = 0;
    for (const site_row& row : r.rows) {
        const std::string& what = r.by == "method" && !row.frames.empty() ? row.frames.front() : row.klass;
        out +=
            text::fmt("%4u %6s %6s %11s %11s %11s %11s  ", ++rank, text::percent_text(100 * row.self, 1).c_str(),
                      text::percent_text(100 * row.accumulated, 1).c_str(),
                      text::human_bytes(whole(row.live_bytes)).c_str(), text::grouped(whole(row.live_objects)).c_str(),
                      text::human_bytes(whole(row.bytes)).c_str(), text::grouped(whole(row.objects)).c_str());
        out += line_safe(what) + "\n";
        if (r.by == "site")
            for (const std::string& f : row.frames) out += "          at " + line_safe(f) + "\n";
    }
    if (r.rows.empty()) out += "     (no sampled allocations)\n";
    if (r.rows_left_out > 0)
        out += text::fmt("     %s more below %s of the %s bytes\n", text::grouped(r.rows_left_out).c_str(),
                         text::percent_text(100 * r.cutoff, 2).c_str(), r.order.c_str());
    if (r.cut_at_size) out += "     (the rows shown stop where their names reach the table's bound)\n";
    return out;
}

}  // namespace report
}  // namespace heapd
