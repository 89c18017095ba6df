#include "daemon/oom/oom_armer.h"

#include <set>

#include "attach/jvm_discovery.h"
#include "attach/process_info.h"
#include "daemon/jvms/container_identity.h"
#include "daemon/jvms/jvm_facts.h"
#include "daemon/rules/rule_match.h"
#include "daemon/runtime/log_text.h"

namespace heapd::daemon {
namespace {

using clock = std::chrono::steady_clock;

// A JVM that could not be armed is tried again after this long.
constexpr std::chrono::seconds retry_not_armed{30};

const char* state_name(arm_state s) {
    switch (s) {
    case arm_state::armed: return "armed";
    case arm_state::own_path: return "dumps to its own path";
    case arm_state::not_armed: return "not armed";
    }
    return "?";
}

}  // namespace

oom_armer::oom_armer(std::shared_ptr<spdlog::logger> log, std::string socket_path, const hash_key& key,
                     dump_collector* collector)
    : log_(std::move(log)), socket_path_(std::move(socket_path)), key_(key), collector_(collector), thread_([this] {
          run();
      }) {}

oom_armer::~oom_armer() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void oom_armer::configure(const oom_options& options) {
    {
        std::lock_guard lock(mutex_);
        options_ = options;
        configured_ = true;
        ++generation_;
    }
    wake_.notify_all();
}

std::optional<arm_status> oom_armer::status_of(const jvm_identity& jvm) const {
    std::lock_guard lock(mutex_);
    auto it = jvms_.find(jvm);
    if (it == jvms_.end()) return std::nullopt;
    return it->second.status;
}

oom_armer::counts oom_armer::count() const {
    std::lock_guard lock(mutex_);
    counts c;
    for (const auto& [id, e] : jvms_) {
        if (e.status.state == arm_state::armed)
            ++c.armed;
        else if (e.status.state == arm_state::own_path)
            ++c.own_path;
        else
            ++c.not_armed;
    }
    return c;
}

std::uint64_t oom_armer::polls() const {
    std::lock_guard lock(mutex_);
    return polls_;
}

void oom_armer::run() {
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [&] { return stopping_ || configured_; });
        if (stopping_) return;
        const std::uint64_t generation = generation_;
        const oom_options options = options_;
        if (options.arm != arm_mode::none) {
            lock.unlock();
            poll_once(options);
            lock.lock();
            ++polls_;
        } else {
            for (const auto& [id, e] : jvms_)
                if (e.status.collected && collector_) collector_->forget(id);
            jvms_.clear();
        }
        wake_.wait_for(lock, options.poll_interval, [&] { return stopping_ || generation_ != generation; });
        if (stopping_) return;
    }
}

void oom_armer::poll_once(const oom_options& options) {
    auto found = attach::discover_jvms();
    if (!found) {
        log_->warn("oom arming: cannot find the JVMs: {}", bounded_text(found.error().message));
        return;
    }
    std::set<jvm_identity> alive, seen_elsewhere;
    for (const attach::discovered_jvm& j : found->jvms) {
        auto info = attach::read_process_info(j.pid);
        if (!info) continue;  // gone since
        const jvm_identity id{j.pid, info->start_time};
        jvm_facts facts = read_jvm_facts(j);
        // A JVM without hsperfdata (-XX:+PerfDisableSharedMem) is judged by its command line.
        const bool no_perfdata = j.perfdata_path.empty();
        if (!no_perfdata && (!facts.summary || !facts.summary->accessible)) continue;
        // A JVM whose hook runs heapd: the hook hands the dump over at the error. Which daemon it
        // hands it to, only the flag's exact value says (arm_jvm reads it): in hsperfdata's vmArgs a
        // value is cut at the next " --", its --socket with it. Any other JVM when all are armed
        // (the selected ones, when selectors are given): the daemon collects its dump.
        const bool hooked = hook_runs_heapd(oom_settings_of(facts));
        if (!hooked) {
            if (options.arm != arm_mode::all || !collector_) continue;
            if (!options.select.empty()) {
                const jvm_perf_summary none;
                const std::string user = user_name_of(j.uid);
                bool chosen = false;
                for (const jvm_selector& sel : options.select)
                    chosen = chosen || selects(sel, j, facts.summary ? *facts.summary : none, user);
                if (!chosen) continue;
            }
        }
        {
            std::lock_guard lock(mutex_);
            if (elsewhere_.contains(id)) {
                seen_elsewhere.insert(id);
                continue;
            }
        }
        alive.insert(id);

        std::optional<entry> known;
        {
            std::lock_guard lock(mutex_);
            if (auto it = jvms_.find(id); it != jvms_.end()) known = it->second;
        }
        const auto now = clock::now();
        if (known) {
            const auto wait = known->status.state == arm_state::not_armed
                                  ? std::chrono::duration_cast<std::chrono::milliseconds>(retry_not_armed)
                                  : options.recheck;
            if (now - known->checked < wait) continue;
        }
        // A JVM in its OutOfMemoryError hook is at a safepoint: left alone.
        if (oom_hook_running(j.pid)) continue;
        attach::attach_options how;
        how.timeout = std::chrono::seconds(10);
        how.expected_start_time = info->start_time;
        // A check of an armed JVM goes through the listener arming started, never a signal.
        how.may_signal = !known || known->status.state == arm_state::not_armed;
        const std::uint64_t heap_max =
            facts.summary ? static_cast<std::uint64_t>(std::max<std::int64_t>(facts.summary->heap.max_capacity, 0)) : 0;
        std::string main_class = facts.summary ? facts.summary->main_class : "no hsperfdata";
        // Named while it runs: its dump and death records name its container after it is gone.
        if (j.in_container) main_class += " in container " + container_of(j.pid, info->start_time).label();
        const std::string tag = armed_dump_tag(key_, j.ns_pid, info->start_time, j.uid);
        collect_target target{id, j.ns_pid, j.uid, info->egid, j.pid_ns, j.mount_ns, {}, {}, {}};
        if (facts.summary) {
            target.jvm = facts.summary->vm_version;
            target.command = facts.summary->command;
        }
        // Watched before its flags are set: a dump made right after is not missed.
        if (!hooked && (!known || known->status.state == arm_state::not_armed)) {
            target.dump_path = "/tmp/" + armed_dump_prefix(j.ns_pid, info->start_time) + tag + ".hprof";
            if (auto why = collect(target)) {
                arm_status st;
                st.why = "its dump could not be collected: " + *why;
                if (!known || known->status.why != st.why)
                    log_->warn("oom arming: pid {} ({}) not armed: {}", j.pid, bounded_text(main_class),
                               bounded_text(st.why));
                std::lock_guard lock(mutex_);
                jvms_[id] = entry{std::move(st), now};
                continue;
            }
        }
        arm_status st = arm_jvm(j.pid, j.ns_pid, info->start_time, heap_max, tag, socket_path_, how);
        if (!attach::read_process_info(j.pid)) {  // it ended meanwhile
            if (!hooked) collector_->forget(id);
            continue;
        }
        if (!st.another_daemons && st.state != arm_state::not_armed && st.collected) {
            target.dump_path = st.dump_path;  // its own HeapDumpPath, perhaps ("": its working directory)
            if (auto why = collect(target)) st.why += "; its dump cannot be collected: " + *why;
        } else if (!hooked && st.state == arm_state::not_armed && (!known || !known->status.collected)) {
            collector_->forget(id);
        }
        if (st.another_daemons) {  // not one arming is for, after all: looked at no more
            std::lock_guard lock(mutex_);
            jvms_.erase(id);
            elsewhere_.insert(id);
            continue;
        }
        if (known && known->status.state != arm_state::not_armed && st.state == arm_state::not_armed) {
            // A check that could not be made (a busy JVM, a listener gone) does not undo the arming.
            log_->debug("oom arming: pid {}: cannot check its flags now: {}", j.pid, bounded_text(st.why));
            st = known->status;
        }
        const bool news = !known || known->status.state != st.state || st.changed;
        if (news && st.state == arm_state::not_armed)
            log_->warn("oom arming: pid {} ({}) not armed: {}", j.pid, bounded_text(main_class), bounded_text(st.why));
        else if (news)
            log_->info("oom arming: pid {} ({}) {}: {}{}", j.pid, bounded_text(main_class), state_name(st.state),
                       bounded_text(st.why), st.dump_path.empty() ? "" : ", dump to " + bounded_text(st.dump_path));
        std::lock_guard lock(mutex_);
        jvms_[id] = entry{std::move(st), now};
    }
    std::lock_guard lock(mutex_);
    std::erase_if(jvms_, [&](const auto& e) {
        if (alive.contains(e.first)) return false;
        if (collector_) collector_->forget(e.first);  // a dump it made and did not close is taken now
        return true;
    });
    std::erase_if(elsewhere_, [&](const jvm_identity& id) { return !seen_elsewhere.contains(id); });
}

std::optional<std::string> oom_armer::collect(const collect_target& target) {
    if (!collector_) return "no collector";
    auto watched = collector_->watch(target);
    if (!watched) return watched.error().message;
    return std::nullopt;
}

}  // namespace heapd::daemon
