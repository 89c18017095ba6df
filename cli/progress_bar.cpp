#include "cli/progress_bar.h"

#include <unistd.h>

#include <cstdio>

#include "base/terminal.h"

namespace heapd::cli {

progress_bar::progress_bar(std::string label) : active_(::isatty(STDERR_FILENO) == 1) {
    view_.label = std::move(label);
}

progress_bar::~progress_bar() { clear(); }

void progress_bar::update(const wire::progress_event& e) {
    if (!started_) {
        started_ = true;
        start_ = std::chrono::steady_clock::now();
    }
    view_.phase = e.phase;
    view_.done = e.done;
    view_.total = e.total;
    draw();
}

void progress_bar::tick() {
    if (started_) draw();
}

void progress_bar::draw() {
    if (!active_) return;
    view_.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string line = "\r" + progress_line(view_, terminal_width(STDERR_FILENO)) + "\x1b[K";
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    drawn_ = true;
}

void progress_bar::clear() {
    if (!active_ || !drawn_) return;
    std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
    drawn_ = false;
}

}  // namespace heapd::cli
