#pragma once
// Gathers the daemon's metrics on a thread of its own (reading /proc and every JVM's hsperfdata is
// never done on the io_context thread): for `metrics` requests, whose callbacks it posts back to the
// io_context, and every metrics_options::interval for the node_exporter textfile, which it writes
// atomically (a temporary file renamed over it, mode 0644).
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/logger.h>
#include <boost/asio/io_context.hpp>

#include "daemon/config/config.h"
#include "daemon/deaths/death_watcher.h"
#include "daemon/jobs/job_manager.h"
#include "daemon/metrics/metrics.h"
#include "daemon/metrics/metrics_counters.h"
#include "daemon/oom/oom_armer.h"
#include "daemon/rules/rule_watcher.h"
#include "daemon/store/store.h"

namespace heapd::daemon {

// Where the daemon's part of a snapshot comes from.
struct metrics_sources {
    store& s;
    job_manager& jobs;
    std::shared_ptr<metrics_counters> counters;
    std::string version;
    double start_time_seconds = 0;
    const oom_armer* armer = nullptr;       // the JVMs armed for their OutOfMemoryError, when arming runs
    const rule_watcher* watcher = nullptr;  // the JVMs' heap outlooks
    const death_watcher* deaths = nullptr;  // the JVMs watched for their end
};

// Everything a snapshot holds, gathered now (discovery and hsperfdata: call it off the io thread).
metrics_snapshot gather_metrics(const metrics_sources& sources, spdlog::logger& log);

// The metrics thread: snapshots on request, and the textfile.
class metrics_service {
public:
    using snapshot_ptr = std::shared_ptr<const metrics_snapshot>;

    metrics_service(boost::asio::io_context& io, metrics_sources sources, metrics_options options,
                    std::shared_ptr<spdlog::logger> log);
    ~metrics_service();
    metrics_service(const metrics_service&) = delete;
    metrics_service& operator=(const metrics_service&) = delete;

    // Starts the thread; the textfile (when there is one) is written at once, then every interval.
    void start();
    // Stops the thread (after the snapshot under way, if any); requests still waiting get no answer.
    void stop();
    // New options, from any thread (a reload): a new textfile path is written at once (the old file,
    // when heapd wrote it, is removed), a new interval counts from now; "" stops writing.
    void set_options(const metrics_options& options);
    metrics_options options() const;
    // Gathers a snapshot on the metrics thread; done runs on the io_context thread with it.
    void gather(std::function<void(snapshot_ptr)> done);

private:
    using clock = std::chrono::steady_clock;
    void run();
    void write_textfile(const std::string& text, const std::string& path);

    boost::asio::io_context& io_;
    metrics_sources sources_;
    std::shared_ptr<spdlog::logger> log_;
    mutable std::mutex mu_;
    std::condition_variable wake_;
    metrics_options options_;
    clock::time_point next_write_;
    std::vector<std::function<void(snapshot_ptr)>> waiting_;
    bool stopping_ = false;
    std::string written_;     // the textfile this daemon wrote last (metrics thread only)
    std::string last_error_;  // the last failure to write it, logged once (metrics thread only)
    std::thread thread_;
};

}  // namespace heapd::daemon
