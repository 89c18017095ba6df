#include "daemon_log.h"

#include <syslog.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/syslog_sink.h>

namespace heapd::daemon {

std::shared_ptr<spdlog::logger> make_logger(bool foreground) {
    spdlog::sink_ptr sink;
    if (foreground) {
        sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
        sink->set_pattern("%Y-%m-%d %H:%M:%S.%e heapd[%P] %l: %v");
    } else {
        sink = std::make_shared<spdlog::sinks::syslog_sink_mt>("heapd", LOG_PID, LOG_DAEMON, true);
        sink->set_pattern("%v");
    }
    auto log = std::make_shared<spdlog::logger>("heapd", sink);
    log->set_level(spdlog::level::info);
    log->flush_on(spdlog::level::info);
    return log;
}

} // namespace heapd::daemon
