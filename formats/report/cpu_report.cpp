#include "formats/report/cpu_report.h"

#include "base/safe_text.h"
#include "formats/report/quantities.h"
#include "formats/report/report_text.h"

namespace heapd {
inline namespace report {

using json = nlohmann::ordered_json;

json to_json(const cpu_report& r) {
    json rows = json::array();
    for (const cpu_row& row : r.rows)
        rows.push_back(
            {{"frames", row.frames}, {"count", row.count}, {"self", row.self}, {"accumulated", row.accumulated}});
    return {{"agent", r.agent},
            {"period_ms", r.period_ms},
            {"seconds", r.seconds},
            {"ticks", r.ticks},
            {"samples", r.samples},
            {"dropped", r.dropped},
            {"depth", r.depth},
            {"rows_left_out", r.rows_left_out},
            {"cut_at_size", r.cut_at_size},
            {"rows", std::move(rows)}};
}

result<cpu_report> cpu_report_from_json(const json& j) {
    try {
        cpu_report r;
        r.agent = j.at("agent").get<std::string>();
        r.period_ms = j.at("period_ms").get<int>();
        r.seconds = j.at("seconds").get<double>();
        r.ticks = j.at("ticks").get<std::uint64_t>();
        r.samples = j.at("samples").get<std::uint64_t>();
        r.dropped = j.at("dropped").get<std::uint64_t>();
        r.depth = j.at("depth").get<int>();
        r.rows_left_out = j.at("rows_left_out").get<std::uint64_t>();
        r.cut_at_size = j.value("cut_at_size", false);
        for (const json& row : j.at("rows"))
            r.rows.push_back({row.at("frames").get<std::vector<std::string>>(), row.at("count").get<std::uint64_t>(),
                              row.at("self").get<double>(), row.at("accumulated").get<double>()});
        return r;
    } catch (const json::exception& e) {
        return fail(error_code::bad_value, std::string("CPU samples JSON: ") + e.what());
    }
}

std::string render_cpu_text(const cpu_report& r) {
    std::string out =
        text::fmt("CPU samples: %s in %.1f s, every %d ms (%s ticks), of the threads running Java code\n",
                  text::grouped(r.samples).c_str(), r.seconds, r.period_ms, text::grouped(r.ticks).c_str());
    out +=
        "Safepoint-biased, as hprof's cpu=samples: each tick stops the JVM and takes the stacks where the\n"
        "threads stopped, which is where compiled code polls for safepoints, not always where time went\n";
    if (r.dropped != 0)
        out += "Dropped samples: " + text::grouped(r.dropped) + " (a method without a name, or the trace table full)\n";
    out += "\n" + text::fmt("%4s %6s %6s %9s  %s\n", "rank", "self", "accum", "count", "trace");
    unsigned rank = 0;
    for (const cpu_row& row : r.rows) {
        out += text::fmt("%4u %6s %6s %9s  ", ++rank, text::percent_text(100 * row.self, 1).c_str(),
                         text::percent_text(100 * row.accumulated, 1).c_str(), text::grouped(row.count).c_str());
        out += (row.frames.empty() ? std::string("(no frames)") : line_safe(row.frames.front())) + "\n";
        for (std::size_t i = 1; i < row.frames.size(); ++i) out += "          at " + line_safe(row.frames[i]) + "\n";
    }
    if (r.rows.empty()) out += "     (no thread ran Java code at any tick)\n";
    if (r.rows_left_out > 0) out += text::fmt("     %s more stacks\n", text::grouped(r.rows_left_out).c_str());
    if (r.cut_at_size) out += "     (the rows shown stop where their names reach the table's bound)\n";
    return out;
}

}  // namespace report
}  // namespace heapd
