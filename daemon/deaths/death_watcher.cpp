#include "daemon/deaths/death_watcher.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

#include "attach/jvm_discovery.h"
#include "attach/process_info.h"
#include "daemon/jvms/container_identity.h"
#include "daemon/jvms/jvm_facts.h"
#include "daemon/jvms/memory_cgroup.h"
#include "daemon/jvms/memory_probe.h"
#include "daemon/runtime/log_text.h"
#include "daemon/store/job_record.h"

namespace heapd::daemon {
namespace {

using clock = std::chrono::steady_clock;

// A breakdown from /proc is read again when resident memory has grown by this share of the limit
// since the last one (or by breakdown_growth_bytes without a limit), or when it is this old.
constexpr double breakdown_growth_share = 0.05;
constexpr std::int64_t breakdown_growth_bytes = 64ll << 20;
constexpr std::int64_t breakdown_max_age_ms = 60'000;

// The JVM's main class, version and command, from its hsperfdata or else its command line.
void describe(death_record& r, const attach::discovered_jvm& j) {
    const jvm_facts facts = read_jvm_facts(j);
    const jvm_perf_summary summary = facts.summary ? *facts.summary : summary_from_command_line(j.pid);
    r.main_class = summary.main_class;
    r.jvm = summary.vm_version;
    r.command_line = summary.command;
    if (j.in_container) r.container = to_json(container_of(j.pid, r.start_time));
}

}  // namespace

// One JVM watched: its pidfd, and what its death record will say of it.
struct death_watcher::watched_jvm {
    process_watch watch;
    death_record record;
    std::optional<memory_cgroup> cgroup;
    std::optional<std::int64_t> cgroup_oom;  // its cgroup's OOM kill count at the last glance
    std::optional<std::int64_t> host_oom;    // the host's at the last poll
    std::int64_t breakdown_resident = 0;     // resident memory when the last breakdown was read
};

std::size_t max_watched_jvms(std::uint64_t open_files) {
    return static_cast<std::size_t>(std::min<std::uint64_t>(open_files / 4, 1024));
}

death_watcher::death_watcher(std::shared_ptr<spdlog::logger> log, std::string host, std::size_t max_jvms,
                             death_handler handler, std::size_t max_per_user)
    : log_(std::move(log)),
      host_(std::move(host)),
      max_jvms_(max_jvms),
      max_per_user_(max_per_user > 0 ? max_per_user : std::max<std::size_t>(max_jvms / 4, 1)),
      handler_(std::move(handler)),
      wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    thread_ = std::thread([this] { run(); });
}

death_watcher::~death_watcher() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] auto w = ::write(wake_.get(), &one, sizeof one);
    thread_.join();
}

void death_watcher::configure(std::chrono::milliseconds poll_interval) {
    {
        std::lock_guard lock(mutex_);
        interval_ = std::max(poll_interval, std::chrono::milliseconds(100));
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] auto w = ::write(wake_.get(), &one, sizeof one);
}

void death_watcher::run() {
    auto next_poll = clock::now();
    std::vector<pollfd> fds;
    for (;;) {
        std::chrono::milliseconds interval{0};
        {
            std::lock_guard lock(mutex_);
            if (stopping_) return;
            interval = interval_;
        }
        if (interval.count() > 0 && clock::now() >= next_poll) {
            poll_jvms();
            polls_.fetch_add(1);
            next_poll = clock::now() + interval;
        }
        fds.assign(1, pollfd{wake_.get(), POLLIN, 0});
        for (const auto& w : jvms_) fds.push_back(pollfd{w->watch.fd(), POLLIN, 0});
        const auto wait = interval.count() > 0 ? std::chrono::duration_cast<std::chrono::milliseconds>(
                                                     std::max(next_poll - clock::now(), clock::duration::zero()))
                                               : std::chrono::milliseconds(-1);
        if (::poll(fds.data(), fds.size(), static_cast<int>(wait.count())) < 0) continue;  // EINTR
        if (fds[0].revents != 0) {
            std::uint64_t count = 0;
            [[maybe_unused]] auto r = ::read(wake_.get(), &count, sizeof count);
            next_poll = clock::now();  // new settings: look at the JVMs at once
        }
        std::vector<bool> ended(jvms_.size(), false);
        for (std::size_t i = 0; i < jvms_.size(); ++i)
            if ((fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
                // A death that cannot be read (the library throws where it should not) costs its
                // record, never the daemon: this thread ending would end it.
                try {
                    record_death(*jvms_[i]);
                } catch (const std::exception& e) {
                    log_->error("deaths: pid {} ended, but its death could not be read: {}", jvms_[i]->record.pid,
                                bounded_text(e.what()));
                }
                ended[i] = true;
            }
        std::size_t i = 0;
        std::erase_if(jvms_, [&](const auto&) { return ended[i++]; });
        watched_.store(jvms_.size());
    }
}

void death_watcher::poll_jvms() {
    auto found = attach::discover_jvms();
    if (!found) {
        log_->warn("deaths: cannot find the JVMs: {}", bounded_text(found.error().message));
        return;
    }
    const auto host_oom = host_oom_kills();
    const std::int64_t now = now_ms();
    for (const attach::discovered_jvm& j : found->jvms) {
        auto info = attach::read_process_info(j.pid);
        if (!info) continue;  // gone since
        auto known = std::find_if(jvms_.begin(), jvms_.end(), [&](const auto& w) {
            return w->watch.pid() == j.pid && w->watch.start_time() == info->start_time;
        });
        if (known == jvms_.end()) {
            if (jvms_.size() >= max_jvms_) {
                if (!std::exchange(warned_full_, true))
                    log_->warn(
                        "deaths: watching {} JVMs already, the most this daemon's open-file limit allows; "
                        "more are not watched",
                        max_jvms_);
                continue;
            }
            // One user's processes (real JVMs or anything that publishes hsperfdata) never take more
            // than a quarter of the watch: the others' JVMs stay watched.
            const std::size_t theirs = static_cast<std::size_t>(
                std::count_if(jvms_.begin(), jvms_.end(), [&](const auto& w) { return w->record.uid == info->euid; }));
            if (info->euid != 0 && theirs >= max_per_user_) {
                if (warned_users_.insert(info->euid).second)
                    log_->warn(
                        "deaths: uid {} has {} JVMs watched already, the most one user may; more are not "
                        "watched",
                        info->euid, theirs);
                continue;
            }
            auto watch = process_watch::open(j.pid, info->start_time);
            if (!watch) {
                if (watch.error().code != error_code::no_such_process)
                    log_->warn("deaths: cannot watch pid {}: {}", j.pid, bounded_text(watch.error().message));
                continue;
            }
            auto w = std::make_unique<watched_jvm>(watched_jvm{std::move(*watch), {}, {}, {}, {}, 0});
            death_record& r = w->record;
            r.host = host_;
            r.pid = j.pid;
            r.start_time = info->start_time;
            r.uid = info->euid;
            r.gid = info->egid;
            r.started_ms = now;
            w->cgroup = memory_cgroup_of_process(j.pid);
            jvms_.push_back(std::move(w));
            known = std::prev(jvms_.end());
        }
        watched_jvm& w = **known;
        w.host_oom = host_oom;
        // A JVM found as it starts may not have written its command to hsperfdata yet.
        if (w.record.main_class.empty()) describe(w.record, j);
        const auto glance = glance_memory(j.pid);
        if (!glance) continue;
        death_record& r = w.record;
        r.last_resident = glance->resident;
        r.last_seen_ms = now;
        r.limit = glance->limit;
        w.cgroup_oom = glance->limit.oom_kills;
        const std::int64_t growth =
            glance->limit.bytes && *glance->limit.bytes > 0
                ? static_cast<std::int64_t>(breakdown_growth_share * static_cast<double>(*glance->limit.bytes))
                : breakdown_growth_bytes;
        if (!r.breakdown || glance->resident - w.breakdown_resident >= growth ||
            now - r.breakdown->at_ms >= breakdown_max_age_ms) {
            memory_probe_options proc_only;
            proc_only.attach = false;
            if (auto b = probe_memory(j.pid, proc_only)) {
                r.breakdown = std::move(*b);
                w.breakdown_resident = glance->resident;
            }
        }
    }
    watched_.store(jvms_.size());
}

void death_watcher::record_death(watched_jvm& w) {
    death_facts facts;
    facts.status = w.watch.status();
    facts.cgroup_oom_before = w.cgroup_oom;
    facts.host_oom_before = w.host_oom;
    if (w.cgroup) {
        facts.cgroup = "cgroup v" + std::to_string(w.cgroup->version) + " " + w.cgroup->path;
        auto root = open_cgroup_root(w.cgroup->version);
        auto limit = root ? cgroup_limit(root->get(), *w.cgroup) : std::unexpected(root.error());
        if (limit) facts.cgroup_oom_after = limit->oom_kills;
    }
    facts.host_oom_after = host_oom_kills();
    death_record r = std::move(w.record);
    r.died_ms = now_ms();
    r.status = facts.status;
    r.verdict = judge_death(facts);
    handler_(std::move(r));
}

}  // namespace heapd::daemon
