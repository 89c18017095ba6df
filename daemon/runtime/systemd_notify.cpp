#include "daemon/runtime/systemd_notify.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include <systemd/sd-daemon.h>

namespace heapd::daemon {
namespace {

// How often the STATUS= line is refreshed (only sent when it changed).
constexpr std::chrono::seconds status_period{5};
// Pings never come faster than this, whatever WATCHDOG_USEC says.
constexpr std::chrono::microseconds min_ping_period{1000};

// A STATUS= value is one line.
std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n') c = ' ';
    return s;
}

}  // namespace

service_notifier::service_notifier(boost::asio::io_context& io, std::function<std::string()> status)
    : describe_(std::move(status)), watchdog_timer_(io), status_timer_(io) {
    const char* socket = std::getenv("NOTIFY_SOCKET");
    enabled_ = socket != nullptr && *socket != '\0';
    std::uint64_t usec = 0;
    if (enabled_ && ::sd_watchdog_enabled(0, &usec) > 0 && usec > 0)
        watchdog_ = std::max(std::chrono::microseconds(static_cast<std::int64_t>(usec / 2)), min_ping_period);
}

void service_notifier::ready() {
    if (!enabled_) return;
    last_status_ = describe_ ? one_line(describe_()) : "";
    const std::string message = last_status_.empty() ? "READY=1" : "READY=1\nSTATUS=" + last_status_;
    (void)::sd_notify(0, message.c_str());
    if (watchdog_) ping();
    if (describe_) refresh_status();
}

void service_notifier::status(const std::string& line) {
    if (!enabled_) return;
    last_status_ = one_line(line);
    (void)::sd_notify(0, ("STATUS=" + last_status_).c_str());
}

void service_notifier::stopping(const std::string& line) {
    if (!enabled_) return;
    watchdog_timer_.cancel();
    status_timer_.cancel();
    describe_ = nullptr;
    last_status_ = one_line(line);
    (void)::sd_notify(0, ("STOPPING=1\nSTATUS=" + last_status_).c_str());
}

void service_notifier::ping() {
    (void)::sd_notify(0, "WATCHDOG=1");
    watchdog_timer_.expires_after(*watchdog_);
    watchdog_timer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) ping();
    });
}

void service_notifier::refresh_status() {
    status_timer_.expires_after(status_period);
    status_timer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec || !describe_) return;
        std::string line = one_line(describe_());
        if (line != last_status_) status(line);
        refresh_status();
    });
}

}  // namespace heapd::daemon
