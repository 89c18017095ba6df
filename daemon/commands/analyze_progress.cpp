#include "daemon/commands/analyze_progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "base/terminal.h"
#include "daemon/jobs/analyze_job.h"

namespace heapd::daemon {

analyze_progress::analyze_progress(std::string label, std::uint64_t dump_bytes, bool lines)
    : terminal_(::isatty(STDERR_FILENO) == 1), lines_(lines && !terminal_), start_(std::chrono::steady_clock::now()) {
    view_.label = std::move(label);
    view_.total = dump_bytes;
}

analyze_progress::~analyze_progress() {
    if (terminal_ && drawn_) std::fputs("\r\x1b[K", stderr);
}

void analyze_progress::phase(std::string_view name) {
    view_.phase = std::string(name);
    last_tenth_ = 0;
    show(0, true);
}

void analyze_progress::within(double done) {
    const int tenth = static_cast<int>(std::clamp(done, 0.0, 1.0) * 10);
    const bool new_tenth = tenth > last_tenth_;
    if (new_tenth) last_tenth_ = tenth;
    show(done, lines_ && new_tenth);
}

void analyze_progress::show(double done, bool force) {
    if (!active()) return;
    const auto now = std::chrono::steady_clock::now();
    if (terminal_ && !force && now - last_draw_ < std::chrono::milliseconds(100)) return;
    if (lines_ && !force) return;
    last_draw_ = now;
    const double before = analysis_share_before(view_.phase), share = analysis_share_of(view_.phase);
    const double whole = std::clamp(before + std::clamp(done, 0.0, 1.0) * share, 0.0, 1.0);
    view_.done = static_cast<std::uint64_t>(whole * static_cast<double>(view_.total));
    view_.elapsed_s = std::chrono::duration<double>(now - start_).count();
    if (terminal_) {
        std::string line = "\r" + progress_line(view_, terminal_width(STDERR_FILENO)) + "\x1b[K";
        std::fputs(line.c_str(), stderr);
        drawn_ = true;
    } else {
        std::string line = progress_line(view_, 120);
        if (done > 0 && done < 1) line += " (" + std::to_string(static_cast<int>(done * 100)) + "% of the phase)";
        std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
}

}  // namespace heapd::daemon
