#pragma once
// One line of a progress bar (label, bar, percent, phase, rate, ETA) for heapctl's jobs and heapd
// analyze: text only; the commands draw it.
#include <cstdint>
#include <string>

namespace heapd {
inline namespace report {

// What the bar shows at one moment.
struct progress_view {
    std::string label;  // "hprof-64.bin"
    std::string phase;  // "dominators"
    std::uint64_t done = 0, total = 0;
    double elapsed_s = 0;  // since the work started
};

// The bar as one line of at most width columns (no newline): label, bar, percent, phase, rate, ETA.
std::string progress_line(const progress_view& v, unsigned width);

}  // namespace report
}  // namespace heapd
