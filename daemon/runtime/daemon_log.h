#pragma once
// The daemon's logger (spdlog): journald under systemd, stderr in the foreground, syslog when
// detached (log_destination.h).
#include <memory>

#include <spdlog/logger.h>

namespace heapd::daemon {

// "heapd" logger: one line per event, with time and level.
std::shared_ptr<spdlog::logger> make_logger(bool foreground);

}  // namespace heapd::daemon
