#include "cli/progress_bar.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "formats/report/report_text.h"

namespace heapd::ctl {
namespace {

unsigned terminal_width() {
    winsize ws{};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return 80;
}

std::string clock_text(double seconds) {
    auto s = static_cast<long long>(seconds + 0.5);
    char buf[32];
    if (s >= 3600)
        std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    else
        std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
    return buf;
}

}  // namespace

std::string progress_line(const progress_view& v, unsigned width) {
    const double fraction =
        v.total == 0 ? 0 : std::min(1.0, static_cast<double>(v.done) / static_cast<double>(v.total));
    char pct[16];
    std::snprintf(pct, sizeof pct, "%3.0f%%", 100 * fraction);
    std::string tail = std::string(" ") + pct + "  " + v.phase;
    if (v.done > 0 && v.elapsed_s > 0.5) {
        const double rate = static_cast<double>(v.done) / v.elapsed_s;
        tail += "  " + human_bytes(static_cast<std::uint64_t>(rate)) + "/s";
        if (v.done < v.total) tail += "  ETA " + clock_text(static_cast<double>(v.total - v.done) / rate);
    } else {
        tail += "  " + clock_text(v.elapsed_s);
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
    std::string line = "\r" + progress_line(view_, terminal_width()) + "\x1b[K";
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

}  // namespace heapd::ctl
