#include "daemon/server/server.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>

#include <boost/asio/post.hpp>

#include "base/unique_fd.h"
#include "base/unix_socket.h"
#include "daemon/config/config_text.h"
#include "daemon/events/report_event.h"
#include "daemon/jobs/analysis_child.h"
#include "daemon/jobs/staging_journal.h"
#include "daemon/oom/spool.h"
#include "daemon/oom/spool_watcher.h"
#include "daemon/runtime/listen_fds.h"
#include "daemon/runtime/log_text.h"
#include "daemon/server/peer.h"

namespace heapd::daemon {
namespace {

using boost::asio::local::stream_protocol;

std::string host_name() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) return "";
    return buf;
}

// True when something accepts connections on the socket at path.
bool someone_listens(const std::string& path) {
    unique_fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    return fd && unix_address(path, addr) && ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
}

}  // namespace

server::server(const serve_options& options, std::shared_ptr<spdlog::logger> log)
    : options_(options),
      log_(std::move(log)),
      signals_(io_),
      acceptor_(io_),
      accept_retry_(io_),
      notifier_(io_, [this] { return status_line(); }),
      reload_signals_(io_),
      tick_(io_) {
    connections_.set_limits(connection_limits_for(options_));
    set_analysis_memory(options_.analysis_memory);
}

connection_limits server::connection_limits_for(const serve_options& o) const {
    connection_limits limits{o.max_connections, o.max_connections_per_user, o.idle_timeout};
    // Each connection holds its socket and up to 8 passed descriptors; 64 are kept for the rest
    // (the store, jobs, the attach helpers), so accept never fails for want of descriptors.
    // The death watcher's pidfds are kept out too (max_watched_jvms).
    rlimit files{};
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
        const std::uint64_t kept = 64 + max_watched_jvms(files.rlim_cur);
        const std::size_t fit = files.rlim_cur > kept + 9 ? static_cast<std::size_t>((files.rlim_cur - kept) / 9) : 1;
        if (limits.max_total > fit) {
            if (log_)
                log_->warn("max_connections {} lowered to {}: the limit of open files is {}", limits.max_total, fit,
                           static_cast<unsigned long long>(files.rlim_cur));
            limits.max_total = fit;
        }
    }
    return limits;
}

server::~server() {
    if (jobs_) jobs_->shutdown(options_.shutdown_grace);
}

result<std::unique_ptr<server>> server::open(const heapd_config& config, std::shared_ptr<spdlog::logger> log,
                                             config_loader reload) {
    const serve_options& options = config.serve;
    std::unique_ptr<server> s(new server(options, log));
    s->config_ = config;
    s->reload_ = std::move(reload);
    s->signals_.add(SIGINT);
    s->signals_.add(SIGTERM);
    s->reload_signals_.add(SIGHUP);
    s->admin_group_ = group_id(options.group);
    if (!s->admin_group_) log->warn("group {} does not exist: only root may act on every dump", options.group);

    store_options so;
    so.root = options.store_dir;
    so.retention = options.retention;
    so.reserve = options.reserve;
    so.access.group = s->admin_group_.value_or(0);
    so.access.chown = ::geteuid() == 0;
    store_recovery recovery;
    auto st = store::open(so, recovery);
    if (!st) return std::unexpected(st.error());
    s->store_ = std::move(*st);
    if (recovery.removed_temp > 0)
        log->info("store: removed {} half-written files left by an earlier run", recovery.removed_temp);
    for (const std::string& what : recovery.removed_corrupt) log->warn("store: removed unreadable {}", what);
    for (const std::string& what : recovery.quarantined) log->warn("store: damaged {}", what);
    for (const std::string& what : recovery.repaired) log->warn("store: kept {}", what);
    if (!s->store_->damaged().empty())
        log->warn(
            "store: {} damaged entries kept aside in {}/damaged (heapctl dumps lists them to root and the "
            "group); remove them when done",
            s->store_->damaged().size(), s->store_->root());
    if (recovery.interrupted > 0)
        log->warn("store: {} jobs were interrupted by the last stop and are now marked failed", recovery.interrupted);
    for (const std::string& id : s->store_->apply_retention(now_ms())) log->info("retention: removed dump {}", id);
    // Dumps JVMs were writing in their /tmp for a daemon killed with its attach helper.
    for (const std::string& name : staging_journal(s->store_->staging_dir(), so.access).clean_up())
        log->info("store: removed {} staged by the last run in a JVM's /tmp", bounded_text(name));
    // Each kept report becomes one structured journal entry (a no-op on a host without journald).
    s->store_->add_report_listener([](const entry_metadata& meta, const analysis_report& report) {
        send_to_journal(make_report_event(meta, report));
    });

    s->jobs_ = std::make_unique<job_manager>(s->io_, *s->store_, options.workers, log);
    s->counters_ = std::make_shared<metrics_counters>();
    s->jobs_->observe([counters = s->counters_](const job_record& job) { counters->job_changed(job); });
    s->jobs_->restore(recovery.jobs);
    if (auto bound = s->bind_socket(); !bound) return std::unexpected(bound.error());
    daemon_info info;
    info.version = "0.1.0";
    info.socket_path = s->options_.socket_path;
    info.host = host_name();
    info.started_ms = now_ms();
    info.pid = ::getpid();
    info.admin_group = s->admin_group_;
    s->handler_ = std::make_unique<request_handler>(info, *s->store_, *s->jobs_, log);
    // OutOfMemoryError requests taken before the last stop and not yet kept as entries.
    std::vector<intake_record> held;
    std::vector<std::string> intake_problems;
    auto intake = oom_intake::open(s->store_->root() + "/intake", so.access, held, intake_problems);
    if (!intake) return std::unexpected(intake.error());
    for (const std::string& p : intake_problems) log->warn("OOM intake: {}", bounded_text(p));
    s->handler_->set_oom_intake(std::move(*intake), std::move(held));
    s->handler_->set_agent_library(s->options_.agent_library);
    s->rules_ = std::make_unique<rule_watcher>(
        s->io_,
        [h = s->handler_.get()](const jvm_identity& jvm, const dump_rule& rule) -> result<std::string> {
            if (rule.action == rule_action::sample) return h->sample_for_rule(jvm.pid, jvm.start_time, rule);
            auto job = h->dump_for_rule(jvm.pid, jvm.start_time, rule.name, rule.live);
            if (!job) return std::unexpected(job.error());
            return " as job " + std::to_string(job->id);
        },
        log);
    // The dumps of JVMs without heapd's hook, collected by the daemon as they are written.
    auto collector =
        dump_collector::open(s->io_, [h = s->handler_.get()](collected_dump d) { h->oom_collected(std::move(d)); });
    if (collector)
        s->collector_ = std::move(*collector);
    else
        log->warn("oom arming: {}; only JVMs whose OnOutOfMemoryError runs heapd are armed",
                  bounded_text(collector.error().message));
    s->armer_ = std::make_unique<oom_armer>(log, s->options_.socket_path, s->store_->key(), s->collector_.get());
    s->armer_->configure(config.oom);
    s->handler_->set_armer(s->armer_.get());
    s->handler_->set_watcher(s->rules_.get());
    auto deaths = death_log::open(s->store_->root() + "/deaths", so.access);
    if (!deaths) return std::unexpected(deaths.error());
    s->death_log_ = std::move(*deaths);
    s->handler_->set_deaths(s->death_log_.get());
    // A JVM mostly dies before the dump of its OutOfMemoryError is kept: its death record names it then.
    s->store_->add_report_listener(
        [deaths = s->death_log_.get(), log](const entry_metadata& meta, const analysis_report&) {
            auto noted = deaths->note_oom_dump(meta);
            if (!noted)
                log->warn("deaths: cannot name the OOM dump {} in the death record of pid {}: {}", meta.id, meta.pid,
                          bounded_text(noted.error().message));
            else if (!noted->empty())
                log->info("death record {} names the OOM dump {}", *noted, meta.id);
        });
    rlimit files{};
    const std::uint64_t open_files =
        ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY ? files.rlim_cur : 1u << 20;
    s->deaths_ = std::make_unique<death_watcher>(log, info.host, max_watched_jvms(open_files),
                                                 [raw = s.get()](death_record r) { raw->jvm_died(std::move(r)); });
    s->deaths_->configure(config.poll_interval);
    metrics_sources sources{
        *s->store_,      *s->jobs_,       s->counters_,    info.version, static_cast<double>(info.started_ms) / 1000,
        s->armer_.get(), s->rules_.get(), s->deaths_.get()};
    s->metrics_ = std::make_unique<metrics_service>(s->io_, sources, config.metrics, log);
    s->handler_->set_metrics(s->metrics_.get());
    s->set_rules(config.rules, config.poll_interval);
    if (!options.spool_dir.empty())
        if (auto spool = make_spool_dir(options.spool_dir); !spool) log->warn("spool: {}", spool.error().message);
    return s;
}

result<void> server::bind_socket() {
    // Socket activation: the service manager's socket, left in place at exit (socket_inode_ 0).
    auto inherited = take_listen_socket();
    if (!inherited) return std::unexpected(inherited.error());
    if (*inherited) {
        boost::system::error_code bec;
        acceptor_.assign(stream_protocol(), (*inherited)->fd, bec);
        if (bec) return fail(error_code::io, "cannot serve the socket passed by the service manager: " + bec.message());
        if (!(*inherited)->path.empty()) options_.socket_path = (*inherited)->path;
        log_->info("socket activation: serving {}, passed by the service manager", options_.socket_path);
        return {};
    }
    const std::string& path = options_.socket_path;
    if (path.empty() || path.size() >= sizeof(sockaddr_un::sun_path))
        return fail(error_code::bad_value, "socket path \"" + path + "\" is empty or longer than " +
                                               std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes");
    std::error_code ec;
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty() && !std::filesystem::exists(parent, ec)) {
        std::filesystem::create_directories(parent, ec);
        if (ec) return fail(error_code::io, "cannot create " + parent.string() + ": " + ec.message());
        ::chmod(parent.c_str(), 0755);
    }
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) return fail(error_code::io, path + " exists and is not a socket");
        if (someone_listens(path)) return fail(error_code::io, "another heapd is already serving " + path);
        ::unlink(path.c_str());  // left by a daemon that died
    }
    boost::system::error_code bec;
    stream_protocol::endpoint endpoint(path);
    acceptor_.open(endpoint.protocol(), bec);
    if (!bec) acceptor_.bind(endpoint, bec);
    if (!bec) acceptor_.listen(boost::asio::socket_base::max_listen_connections, bec);
    if (bec) return fail(error_code::io, "cannot listen on " + path + ": " + bec.message());
    // Everyone may connect; what each may do is decided by their credentials.
    ::chmod(path.c_str(), 0666);
    if (::lstat(path.c_str(), &st) == 0) socket_inode_ = st.st_ino;
    return {};
}

void server::accept() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, stream_protocol::socket socket) {
        if (!acceptor_.is_open() || ec == boost::asio::error::operation_aborted) return;
        if (ec) {
            // Out of descriptors, say: wait a little rather than spin.
            log_->warn("accept failed: {}", ec.message());
            accept_retry_.expires_after(std::chrono::milliseconds(100));
            accept_retry_.async_wait([this](const boost::system::error_code& e) {
                if (!e) accept();
            });
            return;
        }
        auto peer = read_peer(socket.native_handle(), admin_group_);
        if (!peer) {
            log_->warn("{}", peer.error().message);
        } else if (auto refused = connections_.refusal(*peer)) {
            // Told why, then closed; a short reply to a fresh socket does not block.
            if (auto frame = wire::encode_reply(wire::make_error(0, wire::error_kind::busy, *refused)))
                (void)::send(socket.native_handle(), frame->data(), frame->size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        } else {
            connections_.start(std::make_shared<connection>(std::move(socket), connections_, *handler_, *peer));
        }
        accept();
    });
}

void server::remove_socket() {
    struct stat st {};
    if (socket_inode_ != 0 && ::lstat(options_.socket_path.c_str(), &st) == 0 && st.st_ino == socket_inode_)
        ::unlink(options_.socket_path.c_str());
    socket_inode_ = 0;
}

void server::set_rules(std::vector<dump_rule> rules, std::chrono::milliseconds poll_interval) {
    boost::asio::post(io_, [this, rules = std::move(rules), poll_interval]() mutable {
        rules_->set_rules(std::move(rules), poll_interval);
    });
}

bool server::run() {
    signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
        if (ec) return;
        log_->info("stopping on {}", sig == SIGINT ? "SIGINT" : "SIGTERM");
        notifier_.stopping(sig == SIGINT ? "stopping on SIGINT" : "stopping on SIGTERM");
        boost::system::error_code ignored;
        acceptor_.close(ignored);
        accept_retry_.cancel();
        reload_signals_.cancel(ignored);
        connections_.stop_all();
        spool_watcher_.reset();
        tick_.cancel();
        io_.stop();
    });
    log_->info("serving on {} (store {}, {} worker{}, protocol {})", options_.socket_path, store_->root(),
               jobs_->workers(), jobs_->workers() == 1 ? "" : "s", wire::protocol_version);
    accept();
    notifier_.ready();
    metrics_->start();
    wait_for_reload();
    // Dump requests of OOM hooks that ran while no daemon did, and from now on those of hooks the
    // daemon could not take at once.
    boost::asio::post(io_, [this] { handler_->resume_oom(); });
    if (!options_.spool_dir.empty()) {
        auto take = [this] { spool_left_ = handler_->take_spooled(options_.spool_dir); };
        auto watching = spool_watcher::watch(io_, options_.spool_dir, take);
        if (watching)
            spool_watcher_ = std::move(*watching);
        else
            log_->warn("spool: {}; spooled requests are taken at the next start only", watching.error().message);
        boost::asio::post(io_, take);
    }
    tick();
    io_.run();
    metrics_->stop();
    remove_socket();
    auto counts = jobs_->count();
    if (counts.running > 0) log_->info("waiting for {} running job(s) to stop", counts.running);
    if (counts.running > 0)
        notifier_.status("stopping: waiting for " + std::to_string(counts.running) + " running job(s)");
    bool stopped = jobs_->shutdown(options_.shutdown_grace);
    if (!stopped) {
        log_->warn("some jobs did not stop in time; their records will say they were interrupted");
        return stopped;
    }
    // Nothing writes to the store any more (the death watcher stopped too): it is let go before the
    // last line, so that a daemon started on "stopped" finds it free.
    deaths_.reset();
    store_->release();
    log_->info("stopped");
    return stopped;
}

// The STATUS= line systemctl status shows.
std::string server::status_line() const {
    auto counts = jobs_->count();
    return "serving on " + options_.socket_path + ": " + std::to_string(counts.running) + " job(s) running, " +
           std::to_string(counts.queued) + " queued";
}

}  // namespace heapd::daemon

namespace heapd::daemon {

void server::tick() {
    tick_.expires_after(std::chrono::seconds(2));
    tick_.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        handler_->retry_oom();
        if (spool_left_ > 0 && !options_.spool_dir.empty()) spool_left_ = handler_->take_spooled(options_.spool_dir);
        check_socket();
        tick();
    });
}

void server::check_socket() {
    if (socket_inode_ == 0 || !acceptor_.is_open()) return;
    struct stat st {};
    if (::lstat(options_.socket_path.c_str(), &st) == 0 && st.st_ino == socket_inode_) return;
    boost::system::error_code ignored;
    acceptor_.close(ignored);  // its pending accept ends with operation_aborted
    socket_inode_ = 0;
    if (auto bound = bind_socket(); !bound) {
        log_->error(
            "the socket {} was removed and cannot be made again: {}; clients cannot reach heapd until it "
            "is restarted (OOM hooks spool their requests meanwhile)",
            options_.socket_path, bound.error().message);
        return;
    }
    log_->warn("the socket {} was removed or replaced: made again", options_.socket_path);
    accept();
}

void server::wait_for_reload() {
    reload_signals_.async_wait([this](const boost::system::error_code& ec, int) {
        if (ec) return;
        reload();
        wait_for_reload();
    });
}

void server::reload() {
    if (!reload_) {
        log_->info("SIGHUP: no configuration to read again");
        return;
    }
    config_result next = reload_();
    if (!next) {
        for (const config_error& e : next.error()) log_->error("{}", e.describe());
        log_->warn("configuration not reloaded ({} error{}): keeping the running one", next.error().size(),
                   next.error().size() == 1 ? "" : "s");
        return;
    }
    config_changed(*next);
}

void server::config_changed(const heapd_config& next) {
    config_changes changes = compare_configs(config_, next);
    for (const std::string& c : changes.need_restart)
        log_->warn("configuration: {} needs a restart to take effect; still using the old value", c);
    if (changes.live.empty()) {
        log_->info("configuration reloaded: nothing to change{}", changes.need_restart.empty() ? "" : " now");
        return;
    }
    std::string applied;
    for (const std::string& c : changes.live) applied += (applied.empty() ? "" : "; ") + c;
    log_->info("configuration reloaded: {}", applied);

    // What only a restart changes keeps its running value.
    heapd_config taken = next;
    taken.serve.socket_path = config_.serve.socket_path;
    taken.serve.store_dir = config_.serve.store_dir;
    taken.serve.spool_dir = config_.serve.spool_dir;
    taken.serve.group = config_.serve.group;
    taken.serve.workers = config_.serve.workers;
    taken.serve.foreground = config_.serve.foreground;
    config_ = std::move(taken);
    options_.max_connections = config_.serve.max_connections;
    options_.max_connections_per_user = config_.serve.max_connections_per_user;
    options_.idle_timeout = config_.serve.idle_timeout;
    connections_.set_limits(connection_limits_for(options_));
    options_.analysis_memory = config_.serve.analysis_memory;
    set_analysis_memory(options_.analysis_memory);
    options_.shutdown_grace = config_.serve.shutdown_grace;
    store_->set_retention(config_.serve.retention);
    for (const std::string& id : store_->apply_retention(now_ms())) log_->info("retention: removed dump {}", id);
    rules_->set_rules(config_.rules, config_.poll_interval);
    armer_->configure(config_.oom);
    deaths_->configure(config_.poll_interval);
    metrics_->set_options(config_.metrics);
}

}  // namespace heapd::daemon
