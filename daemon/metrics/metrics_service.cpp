#include "daemon/metrics/metrics_service.h"

#include <unistd.h>

#include <boost/asio/post.hpp>

#include "attach/jvm_discovery.h"
#include "attach/process_info.h"
#include "base/atomic_file.h"
#include "daemon/jvms/jvm_facts.h"
#include "daemon/jvms/memory_probe.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {
namespace {

// The textfile collector runs as another user (node_exporter): everyone may read the file.
constexpr file_access textfile_access{0644, 0755, 0, false};

std::chrono::seconds at_least_a_second(std::chrono::seconds s) { return std::max(s, std::chrono::seconds(1)); }

}  // namespace

metrics_snapshot gather_metrics(const metrics_sources& sources, spdlog::logger& log) {
    metrics_snapshot s;
    daemon_metrics& d = s.daemon;
    d.version = sources.version;
    d.protocol = wire::protocol_version;
    d.start_time_seconds = sources.start_time_seconds;
    if (sources.counters) sources.counters->copy_to(d);
    const auto counts = sources.jobs.count();
    d.jobs_queued = counts.queued;
    d.jobs_running = counts.running;
    for (const entry_metadata& m : sources.s.entries()) d.store.push_back({m.owner_uid, m.stored_bytes});
    if (sources.deaths) d.jvms_watched = sources.deaths->watched();
    if (sources.armer) {
        const auto armed = sources.armer->count();
        d.oom_arming = {{"armed", armed.armed}, {"own_path", armed.own_path}, {"not_armed", armed.not_armed}};
    }
    auto found = attach::discover_jvms();
    if (!found) {
        log.warn("metrics: cannot look for JVMs: {}", found.error().message);
        return s;
    }
    for (const attach::discovered_jvm& jvm : found->jvms) {
        s.jvm_owners.push_back(jvm.uid);
        auto m = jvm_metrics_of(read_jvm_facts(jvm));
        if (!m) continue;
        auto info = sources.watcher ? attach::read_process_info(jvm.pid) : result<attach::process_info>{};
        if (auto o =
                sources.watcher && info ? sources.watcher->outlook_of({jvm.pid, info->start_time}) : std::nullopt) {
            if (o->latest) m->after_gc_occupancy = o->latest->percent() / 100;
            if (o->state == trend_state::rising) m->predicted_full_seconds = o->prediction.seconds_to_full;
        }
        if (const auto memory = glance_memory(jvm.pid)) {
            m->resident = memory->resident;
            m->memory_limit = memory->limit.bytes;
        }
        s.jvms.push_back(std::move(*m));
    }
    return s;
}

metrics_service::metrics_service(boost::asio::io_context& io, metrics_sources sources, metrics_options options,
                                 std::shared_ptr<spdlog::logger> log)
    : io_(io), sources_(std::move(sources)), log_(std::move(log)), options_(std::move(options)) {}

metrics_service::~metrics_service() { stop(); }

void metrics_service::start() {
    std::lock_guard lock(mu_);
    if (thread_.joinable() || stopping_) return;
    next_write_ = clock::now();
    thread_ = std::thread([this] { run(); });
}

void metrics_service::stop() {
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
        waiting_.clear();
    }
    wake_.notify_all();
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void metrics_service::set_options(const metrics_options& options) {
    {
        std::lock_guard lock(mu_);
        options_ = options;
        next_write_ = clock::now();
    }
    wake_.notify_all();
}

metrics_options metrics_service::options() const {
    std::lock_guard lock(mu_);
    return options_;
}

void metrics_service::gather(std::function<void(snapshot_ptr)> done) {
    {
        std::lock_guard lock(mu_);
        waiting_.push_back(std::move(done));
    }
    wake_.notify_all();
}

void metrics_service::run() {
    std::unique_lock lock(mu_);
    while (!stopping_) {
        const bool writes = !options_.textfile.empty();
        if (!writes && !written_.empty()) {
            ::unlink(written_.c_str());  // writing stopped: no stale metrics left for the collector
            written_.clear();
        }
        const bool due = writes && clock::now() >= next_write_;
        if (waiting_.empty() && !due) {
            if (writes)
                wake_.wait_until(lock, next_write_);
            else
                wake_.wait(lock);
            continue;
        }
        auto callers = std::move(waiting_);
        waiting_.clear();
        const metrics_options options = options_;
        if (due) next_write_ = clock::now() + at_least_a_second(options.interval);
        lock.unlock();

        auto snapshot = std::make_shared<const metrics_snapshot>(gather_metrics(sources_, *log_));
        if (due) write_textfile(render_metrics(*snapshot), options.textfile);
        for (auto& done : callers) boost::asio::post(io_, [done = std::move(done), snapshot] { done(snapshot); });
        lock.lock();
    }
}

void metrics_service::write_textfile(const std::string& text, const std::string& path) {
    if (!written_.empty() && written_ != path) {
        ::unlink(written_.c_str());  // the collector would go on reading it, frozen
        written_.clear();
    }
    auto w = write_file_atomic(path, text, textfile_access);
    if (!w) {
        if (w.error().message != last_error_) log_->warn("metrics: {}", w.error().message);
        last_error_ = w.error().message;
        return;
    }
    if (written_ != path || !last_error_.empty())
        log_->info("metrics: writing {} every {} s", path, at_least_a_second(options().interval).count());
    written_ = path;
    last_error_.clear();
}

}  // namespace heapd::daemon
