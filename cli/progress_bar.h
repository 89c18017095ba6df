#pragma once
// The progress bar heapctl draws on a terminal while a job runs: phase, percent, rate and ETA.
#include <chrono>
#include <cstdint>
#include <string>

#include "formats/report/progress_line.h"
#include "formats/wire/protocol.h"

namespace heapd::cli {

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

}  // namespace heapd::cli
