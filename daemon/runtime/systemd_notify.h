#pragma once
// sd_notify(3) for a Type=notify service: READY=1 once heapd serves, STATUS= lines saying what it
// does, STOPPING=1 when it stops, and WATCHDOG=1 pings from the event loop, so a daemon whose
// loop is stuck is restarted by the service manager. Does nothing without $NOTIFY_SOCKET.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

namespace heapd::daemon {

// The service manager's side of heapd's life, told over $NOTIFY_SOCKET.
class service_notifier {
public:
    // status() is asked for a STATUS= line now and then while serving (sent when it changed).
    explicit service_notifier(boost::asio::io_context& io, std::function<std::string()> status = {});
    // READY=1 with a first STATUS=, then watchdog pings and status updates on io's timers.
    void ready();
    void status(const std::string& line);
    // STOPPING=1 with a STATUS=; the timers stop.
    void stopping(const std::string& line);
    // How often WATCHDOG=1 is sent: half of $WATCHDOG_USEC when $WATCHDOG_PID is unset or names
    // this process; nullopt when the watchdog is off.
    std::optional<std::chrono::microseconds> watchdog_interval() const { return watchdog_; }

private:
    void ping();
    void refresh_status();

    std::function<std::string()> describe_;
    std::optional<std::chrono::microseconds> watchdog_;
    bool enabled_ = false;  // $NOTIFY_SOCKET is set
    std::string last_status_;
    boost::asio::steady_timer watchdog_timer_, status_timer_;
};

}  // namespace heapd::daemon
