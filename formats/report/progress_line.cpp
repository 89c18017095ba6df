#include "formats/report/progress_line.h"

#include <algorithm>
#include <cstdio>

#include "formats/report/quantities.h"
#include "formats/report/report_text.h"

namespace heapd {
inline namespace report {
namespace {

// Seconds as the bar shows them: "4m 10s".
std::string seconds_text(double seconds) { return text::clock_text(static_cast<std::uint64_t>(seconds * 1000 + 0.5)); }

}  // namespace

std::string progress_line(const progress_view& v, unsigned width) {
    const double fraction =
        v.total == 0 ? 0 : std::min(1.0, static_cast<double>(v.done) / static_cast<double>(v.total));
    char pct[16];
    std::snprintf(pct, sizeof pct, "%3.0f%%", 100 * fraction);
    std::string tail = std::string(" ") + pct + "  " + v.phase;
    if (v.done > 0 && v.elapsed_s > 0.5) {
        const double rate = static_cast<double>(v.done) / v.elapsed_s;
        tail += "  " + text::human_bytes(static_cast<std::uint64_t>(rate)) + "/s";
        if (v.done < v.total) tail += "  ETA " + seconds_text(static_cast<double>(v.total - v.done) / rate);
    } else {
        tail += "  " + seconds_text(v.elapsed_s);
    }
    std::string label = v.label;
    const std::size_t bar_min = 10;
    // label, " [", bar, "]", tail within width; the label is cut first, then the bar.
    std::size_t room = width > tail.size() + 4 + bar_min ? width - tail.size() - 4 - bar_min : 0;
    if (label.size() > std::min<std::size_t>(room, 30)) {
        std::size_t keep = std::min<std::size_t>(room, 30);
        label = keep > 3 ? "..." + label.substr(label.size() - (keep - 3)) : "";
    }
    std::size_t used = label.size() + 3 + tail.size();
    std::size_t bar = width > used ? std::min<std::size_t>(width - used - 1, 40) : 0;
    if (bar < 3) return (label + tail).substr(0, width > 0 ? width - 1 : 0);
    std::size_t filled = static_cast<std::size_t>(fraction * static_cast<double>(bar));
    return label + " [" + std::string(filled, '#') + std::string(bar - filled, '.') + "]" + tail;
}

}  // namespace report
}  // namespace heapd
