#pragma once
// CPU samples as hprof's cpu=samples printed them: stacks of the threads running Java code, each
// counted at every tick of heapd's agent (formats/sites/cpu_ranking.h makes it), ranked, with their
// shares. Its JSON (`heapd cpu --json`) and text forms.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace heapd {
inline namespace report {

// One stack: its frames as text ("a.B.m(B.java:12)", the running frame first), how many samples,
// and their shares (0 to 1) of all samples.
struct cpu_row {
    std::vector<std::string> frames;
    std::uint64_t count = 0;
    double self = 0, accumulated = 0;
};

// The ranked stacks and how they were sampled.
struct cpu_report {
    std::string agent;
    int period_ms = 0;
    double seconds = 0;
    std::uint64_t ticks = 0, samples = 0, dropped = 0;
    int depth = 0;
    std::uint64_t rows_left_out = 0;  // past top
    bool cut_at_size = false;         // rows were left out as well because the names shown reached their bound
    std::vector<cpu_row> rows;
};

nlohmann::ordered_json to_json(const cpu_report& r);
// Reads what to_json wrote; bad_value naming what is wrong.
result<cpu_report> cpu_report_from_json(const nlohmann::ordered_json& j);
// The table for people, with how the samples are biased; names through line_safe.
std::string render_cpu_text(const cpu_report& r);

}  // namespace report
}  // namespace heapd
