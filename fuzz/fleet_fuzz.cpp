// libFuzzer entry point: a summary.json (or, for reports uploaded without one, a report.json) as
// anyone who may write to the bucket could leave it: read, grouped with a variant of itself from
// another host, and rendered as text, JSON and the page. Any sanitizer report, abort or escaping
// exception is a finding.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/report/fleet_entry.h"
#include "formats/report/fleet_html.h"
#include "formats/report/fleet_view.h"

namespace {
// Keeps the optimizer from dropping work whose results are otherwise unused.
volatile std::size_t sink;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace heapd;
    const auto j = nlohmann::ordered_json::parse(data, data + size, nullptr, false);
    if (j.is_discarded()) return 0;
    std::vector<fleet_entry> entries;
    if (auto e = fleet_entry_from_json(j)) {
        entries.push_back(*e);
        fleet_entry other = *e;
        other.host += "-b";
        other.time_ms += 1;
        entries.push_back(std::move(other));
    } else {
        fleet_context c;
        c.key = "prod/host/Service/1";
        const std::string_view text(reinterpret_cast<const char*>(data), size);
        if (auto r = fleet_entry_of_report(text, c)) entries.push_back(std::move(*r));
    }
    if (entries.empty()) return 0;
    fleet_filter everything;
    everything.min_retained = 0;
    const fleet_view v = build_fleet_view(entries, everything);
    fleet_page page;
    page.source = "s3://bucket/prod";
    for (const fleet_entry& e : entries) page.links[e.key] = "https://reports.example/" + e.key + "/report.html";
    sink = sink + render_text(v, 0).size() +
           to_json(v).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).size() +
           render_fleet_html(v, page).size();
    return 0;
}
