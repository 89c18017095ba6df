#pragma once
// Small helpers shared by everything that writes text for people (the report and diff renderers,
// heapctl's listings, the daemon's logs and reasons): printf into a string, byte sizes, counts,
// times, durations, percentages.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace heapd {
inline namespace report {
namespace text {

// printf into a std::string.
template <class... A>
std::string fmt(const char* f, A... a) {
    char buf[512];
    int n = std::snprintf(buf, sizeof buf, f, a...);
    return std::string(buf, n < 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1));
}

// Rows of a table: all when top is 0, else at most top.
inline unsigned rows(std::size_t available, unsigned top) {
    return static_cast<unsigned>(top == 0 ? available : std::min<std::size_t>(available, top));
}

// 1234567 -> "1,234,567".
std::string grouped(std::uint64_t v);
// "1.5 MiB", "312 B": bytes in binary units with three significant digits.
std::string human_bytes(std::uint64_t bytes);
// "2026-11-21 08:37:12 UTC" for milliseconds since the epoch.
std::string utc_time(std::uint64_t ms);
// A time taken: "12 ms", "1.5 s", "4m 10s", "3h 02m".
std::string duration_text(std::int64_t ms);
// Time between two moments, to the second: "12s", "4m 10s", "3h 02m 05s".
std::string clock_text(std::uint64_t ms);
// A percentage with a fixed number of decimals: percent_text(6.25, 1) is "6.2%" (as printf rounds).
std::string percent_text(double percent, int decimals);
// A percentage as people write it: 93 -> "93%", 90.44 -> "90.4%".
std::string round_percent(double percent);

// Appends text after indent, broken before " → " so lines stay under 100 columns (a path).
void wrapped_path(std::string& out, const std::string& indent, const std::string& text);
// Appends "what: a, b, c" after indent, broken after a comma or colon so lines stay under 100 columns.
void wrapped_list(std::string& out, const std::string& indent, const std::string& text);

}  // namespace text
}  // namespace report
}  // namespace heapd
