#pragma once
// The progress bar heapctl draws on a terminal while a job runs: phase, percent, rate and ETA.
#include <chrono>
#include <cstdint>
#include <string>

#include "formats/protocol/protocol.h"

namespace heapd::ctl {

// What the bar shows at one moment.
struct progress_view {
    std::string label;  // "hprof-64.bin"
    std::string phase;  // "dominators"
    std::uint64_t done = 0, total = 0;
    double elapsed_s = 0;  // since the job started running
};

// The bar as one line of at most width columns (no newline): label, bar, percent, phase, rate, ETA.
std::string progress_line(const progress_view& v, unsigned width);

// Draws the bar on stderr (carriage return, no newline) when stderr is a terminal; does nothing
// otherwise, so piped and redirected output stays clean.
class progress_bar {
public:
    explicit progress_bar(std::string label);
    ~progress_bar();
    bool active() const { return active_; }
    void update(const wire::progress_event& e);
    void tick();   // redraws, so time and ETA move between events
    void clear();  // erases the line

private:
    void draw();
    bool active_;
    bool drawn_ = false;
    progress_view view_;
    std::chrono::steady_clock::time_point start_;
    bool started_ = false;
};

}  // namespace heapd::ctl
