#pragma once
// The dumps of one JVM over time, as the HTML report charts them: heap used and what the top leak
// suspects retained at each dump.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace report {

// One dump of a JVM: when, why, how big its heap was and what its top suspects retained.
struct history_point {
    std::string label;  // the dump's id in the store
    std::int64_t time_ms = 0;
    std::string trigger;
    std::uint64_t heap_bytes = 0;  // reachable bytes (all objects' when retained sizes were not computed)
    // The top suspects by name (their class: objects change ids between dumps) and retained bytes.
    std::vector<std::pair<std::string, std::uint64_t>> suspects;
};

// Suspects kept per point.
inline constexpr std::size_t history_suspects = 3;

// The point of a report.
history_point history_point_of(const analysis_report& r, std::string label, std::int64_t time_ms, std::string trigger);

// Points as a JSON array, and back (bad_value when a key is missing or mistyped).
nlohmann::ordered_json to_json(const std::vector<history_point>& points);
result<std::vector<history_point>> history_from_json(const nlohmann::ordered_json& j);

}  // namespace report
}  // namespace heapd
