#pragma once
// The progress of `heapd analyze` on stderr: a bar redrawn in place when stderr is a terminal, or,
// with --progress when it is not, a line as each phase starts and at each tenth of the long ones.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "formats/report/progress_line.h"

namespace heapd::daemon {

// Shows an analysis's phases as the share of the dump analysed (as heapctl shows a job's).
class analyze_progress {
public:
    // lines: print lines when stderr is no terminal (nothing is shown there otherwise).
    analyze_progress(std::string label, std::uint64_t dump_bytes, bool lines);
    ~analyze_progress();  // clears the bar
    analyze_progress(const analyze_progress&) = delete;
    analyze_progress& operator=(const analyze_progress&) = delete;

    bool active() const { return terminal_ || lines_; }
    void phase(std::string_view name);  // a phase starts
    void within(double done);           // how much of the current phase is done (0 to 1)

private:
    void show(double done, bool force);
    bool terminal_;
    bool lines_;
    progress_view view_;
    std::chrono::steady_clock::time_point start_, last_draw_;
    int last_tenth_ = 0;
    bool drawn_ = false;
};

}  // namespace heapd::daemon
