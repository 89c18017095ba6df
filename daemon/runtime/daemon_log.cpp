#include "daemon/runtime/daemon_log.h"

#include <syslog.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/syslog_sink.h>
#include <spdlog/sinks/systemd_sink.h>

#include "daemon/runtime/log_destination.h"

namespace heapd::daemon {

std::shared_ptr<spdlog::logger> make_logger(bool foreground) {
    spdlog::sink_ptr sink;
    switch (choose_log_destination(foreground)) {
    case log_destination::journal:
        // The journal keeps time, pid and priority (from the level) itself.
        sink = std::make_shared<spdlog::sinks::systemd_sink_mt>("heapd");
        break;
    case log_destination::stderr_text:
        sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
        sink->set_pattern("%Y-%m-%d %H:%M:%S.%e heapd[%P] %l: %v");
        break;
    case log_destination::syslog:
        sink = std::make_shared<spdlog::sinks::syslog_sink_mt>("heapd", LOG_PID, LOG_DAEMON, true);
        sink->set_pattern("%v");
        break;
    }
    auto log = std::make_shared<spdlog::logger>("heapd", sink);
    log->set_level(spdlog::level::info);
    log->flush_on(spdlog::level::info);
    return log;
}

}  // namespace heapd::daemon
