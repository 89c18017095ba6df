#pragma once
// `heapd serve`: the Unix socket server, in the shape of Asio's HTTP server example: the server
// accepts connections and owns the connection manager; each connection parses frames and passes
// requests to the request handler; SIGINT and SIGTERM stop it gracefully. One io_context thread
// serves sockets and timers; analyses run on the job manager's bounded pool of workers. SIGHUP reads
// the configuration again and applies it without stopping any job.
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/logger.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/error.h"
#include "daemon/config/config.h"
#include "daemon/config/config_file.h"
#include "daemon/deaths/death_rate.h"
#include "daemon/deaths/death_store.h"
#include "daemon/deaths/death_watcher.h"
#include "daemon/jobs/job_manager.h"
#include "daemon/metrics/metrics_counters.h"
#include "daemon/metrics/metrics_service.h"
#include "daemon/oom/oom_armer.h"
#include "daemon/oom/spool_watcher.h"
#include "daemon/rules/rule_watcher.h"
#include "daemon/runtime/systemd_notify.h"
#include "daemon/server/connection_manager.h"
#include "daemon/server/handlers/request_handler.h"
#include "daemon/store/store.h"

namespace heapd::daemon {

// The daemon: socket, store, jobs.
class server {
public:
    // Reads the configuration again on SIGHUP (the file and the command line's overrides).
    using config_loader = std::function<config_result()>;
    // Opens the store (recovering from a crash) and binds the socket, or takes the one socket
    // activation passed (listen_fds.h); starts the metrics (config.metrics) and the dump rules.
    static result<std::unique_ptr<server>> open(const heapd_config& config, std::shared_ptr<spdlog::logger> log,
                                                config_loader reload = {});
    ~server();
    // Serves until SIGINT or SIGTERM, then stops the jobs. False when some job did not stop within
    // the grace period: the caller must then end the process at once (workers still run).
    bool run();
    // Replaces the dump rules and how often they read the JVMs' hsperfdata (rule_watcher.h), e.g.
    // with heapd_config's rules and poll_interval, at start and at each reload. Callable from any
    // thread, before run() or while it serves: the change is made on the io_context thread. Rules
    // that remain (by name) keep their state; none stops the polling.
    void set_rules(std::vector<dump_rule> rules, std::chrono::milliseconds poll_interval);
    // New metrics options (a reload), from any thread: see metrics_service::set_options.
    void set_metrics_options(const metrics_options& metrics) { metrics_->set_options(metrics); }

private:
    server(const serve_options& options, std::shared_ptr<spdlog::logger> log);
    result<void> bind_socket();
    void accept();
    // The connection limits of o, max_connections lowered to what the open-file limit allows.
    connection_limits connection_limits_for(const serve_options& o) const;
    void remove_socket();
    // A watched JVM died (on the death watcher's thread): kept in the store when worth it (not a
    // clean exit or stop), logged, journalled and counted.
    void jvm_died(death_record r);
    std::string status_line() const;
    void wait_for_reload();
    // Every 2 s: the OOM requests that wait are tried again, the spool taken again when the last
    // pass left requests in it, and the socket made again when its file was removed.
    void tick();
    // The socket file this server made is gone (or another file took its name): a new one is bound
    // and served, and the log says so; nothing for a socket the service manager passed.
    void check_socket();
    // SIGHUP: the configuration read again; when it is valid, config_changed.
    void reload();
    // Takes what can change while serving (retention, rules, metrics, poll interval, limits) and
    // logs what changed; socket, store, spool, group and workers keep their values until a restart.
    void config_changed(const heapd_config& next);

    serve_options options_;
    std::shared_ptr<spdlog::logger> log_;
    boost::asio::io_context io_;
    boost::asio::signal_set signals_;
    boost::asio::local::stream_protocol::acceptor acceptor_;
    boost::asio::steady_timer accept_retry_;
    connection_manager connections_;
    std::optional<gid_t> admin_group_;
    std::unique_ptr<store> store_;
    std::unique_ptr<job_manager> jobs_;
    std::unique_ptr<request_handler> handler_;
    std::unique_ptr<rule_watcher> rules_;         // asks handler_ for dumps: destroyed before it
    std::shared_ptr<metrics_counters> counters_;  // fed by the jobs, also from workers
    std::unique_ptr<dump_collector> collector_;   // calls handler_, called by armer_
    std::unique_ptr<oom_armer> armer_;            // read by handler_ and metrics_
    std::unique_ptr<death_log> death_log_;        // read by handler_, written by jvm_died
    death_rate death_rate_;                       // jvm_died's (the death watcher's thread)
    std::unique_ptr<death_watcher> deaths_;       // calls jvm_died: destroyed before the store and counters
    std::unique_ptr<metrics_service> metrics_;    // destroyed before the store and jobs it reads
    ino_t socket_inode_ = 0;                      // the socket file this server made, removed at exit if still there
    service_notifier notifier_;                   // READY, STATUS, STOPPING and WATCHDOG for systemd
    heapd_config config_;                         // the configuration in force; io_context thread only
    config_loader reload_;
    boost::asio::signal_set reload_signals_;
    std::unique_ptr<spool_watcher> spool_watcher_;  // the spool, while serving
    boost::asio::steady_timer tick_;
    std::size_t spool_left_ = 0;  // requests the last pass over the spool left there
};

}  // namespace heapd::daemon
