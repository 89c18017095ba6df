#include "daemon/rules/rule_watcher.h"

#include <algorithm>
#include <map>
#include <set>

#include <boost/asio/post.hpp>

#include "attach/attach_client.h"
#include "attach/process_info.h"
#include "daemon/jvms/jvm_facts.h"
#include "daemon/rules/rule_match.h"

namespace heapd::daemon {

rule_watcher::rule_watcher(boost::asio::io_context& io, dump_function dump, std::shared_ptr<spdlog::logger> log)
    : io_(io), dump_(std::move(dump)), log_(std::move(log)), timer_(io) {}

rule_watcher::~rule_watcher() {
    // A poll running finishes; its result, posted to the io_context, finds alive_ gone.
    sampler_.join();
    alive_.reset();
}

void rule_watcher::set_rules(std::vector<dump_rule> rules, std::chrono::milliseconds poll_interval) {
    rules_ = std::move(rules);
    poll_interval_ = std::max(poll_interval, std::chrono::milliseconds(10));
    policy_.retain_rules(rules_);
    horizon_ = default_window;
    for (const dump_rule& r : rules_)
        if (r.predict_full_within) horizon_ = std::max(horizon_, r.predict_window);
    memory_horizon_ = std::chrono::seconds(0);
    for (const dump_rule& r : rules_)
        if (r.memory_full_within) memory_horizon_ = std::max(memory_horizon_, r.memory_window);
    ++generation_;
    timer_.cancel();
    log_->info("rules: {} rule{}, reading the JVMs every {} ms", rules_.size(), rules_.size() == 1 ? "" : "s",
               poll_interval_.count());
    if (!polling_) arm(std::chrono::milliseconds(0));
}

void rule_watcher::arm(std::chrono::milliseconds after) {
    const std::uint64_t generation = ++generation_;
    timer_.expires_after(after);
    timer_.async_wait([this, generation](const boost::system::error_code& ec) {
        if (ec || generation != generation_) return;
        start_poll();
    });
}

void rule_watcher::start_poll() {
    if (polling_) return;
    polling_ = true;
    const bool read_memory = std::any_of(rules_.begin(), rules_.end(), [](const dump_rule& r) {
        return r.memory_percent.has_value() || r.memory_full_within.has_value();
    });
    boost::asio::post(sampler_, [this, read_memory, alive = std::weak_ptr<int>(alive_)] {
        auto result = std::make_shared<poll_result>(poll_jvms(read_memory));
        boost::asio::post(io_, [this, alive, result] {
            if (alive.expired()) return;
            polling_ = false;
            ++polls_;
            evaluate(*result);
            arm(poll_interval_);
        });
    });
}

void rule_watcher::probe_zgc(polled_jvm& j) {
    zgc_probe& probe = probes_[j.id];
    std::int64_t count = 0;
    for (const hsperf_collector& c : j.summary->collectors) count += c.invocations;
    const bool settled = count == probe.previous && count != probe.probed;
    // Cycles back to back never settle: then every fourth poll asks anyway.
    const bool busy = count != probe.previous && count != probe.probed && ++probe.unsettled >= 4;
    probe.previous = count;
    j.problem = probe.problem;  // the latest probe's, until the next one
    if (!settled && !busy) return;
    probe.unsettled = 0;
    j.heap_reading_only = !settled;
    attach::attach_options o;
    o.timeout = std::chrono::seconds(5);
    o.expected_start_time = j.id.start_time;
    auto reply = attach::diagnostic_command(j.id.pid, "GC.heap_info", o);
    probe.probed = count;
    if (reply && reply->status == 0) j.heap_used_now = zgc_heap_used(reply->output);
    probe.problem = j.heap_used_now ? std::string()
                    : !reply
                        ? "ZGC's heap is measured through attach, which failed: " + reply.error().message
                        : std::string("ZGC's heap is measured through attach, and GC.heap_info gave no ZHeap figure");
}

rule_watcher::poll_result rule_watcher::poll_jvms(bool read_memory) {
    poll_result p;
    p.at = policy_clock::now();
    p.at_ms = now_ms();
    auto found = attach::discover_jvms();
    if (!found) {
        p.problem = found.error().message;
        return p;
    }
    std::map<uid_t, std::string> names;
    for (const attach::discovered_jvm& j : found->jvms) {
        auto info = attach::read_process_info(j.pid);
        if (!info) continue;  // gone since
        polled_jvm pj;
        pj.jvm = j;
        pj.id = {j.pid, info->start_time};
        jvm_facts facts = read_jvm_facts(j);
        if (facts.gone) continue;
        if (facts.summary && facts.summary->accessible)
            pj.summary = std::move(facts.summary);
        else if (facts.summary)
            pj.starting = true;
        if (!pj.summary) {
            pj.command_summary = summary_from_command_line(j.pid);
            pj.problem = j.perfdata_path.empty() ? "it publishes no hsperfdata (-XX:-UsePerfData or "
                                                   "-XX:+PerfDisableSharedMem): nothing measures its heap without "
                                                   "attaching; schedules still apply"
                                                 : facts.problem;
        } else if (family_of(*pj.summary) == collector_family::z) {
            probe_zgc(pj);
        }
        auto [name, fresh] = names.try_emplace(j.uid);
        if (fresh) name->second = user_name_of(j.uid);
        pj.user_name = name->second;
        if (read_memory) pj.memory = glance_memory(j.pid);
        p.jvms.push_back(std::move(pj));
    }
    std::erase_if(probes_, [&](const auto& kv) {
        return std::none_of(p.jvms.begin(), p.jvms.end(), [&](const polled_jvm& j) { return j.id == kv.first; });
    });
    return p;
}

std::optional<after_collection> rule_watcher::follow(followed& f, const polled_jvm& j, const poll_result& p) {
    heap_outlook& o = f.outlook;
    o.watched = j.summary.has_value();
    if (!j.summary) {
        o.note = j.problem;
        if (!f.told && !j.problem.empty()) {
            log_->info("watch: pid {} ({}) is not watched: {}", j.id.pid, j.command_summary.main_class, j.problem);
            f.told = true;
        }
        return std::nullopt;
    }
    o.note = j.problem;  // watched, but not measured (ZGC without attach)
    if (!o.note.empty() && !f.told) {
        log_->info("watch: pid {} ({}): {}", j.id.pid, j.summary->main_class, o.note);
        f.told = true;
    }
    const double seconds = std::chrono::duration<double>(p.at.time_since_epoch()).count();
    auto m = f.tracker.feed(*j.summary, seconds, j.heap_reading_only ? std::nullopt : j.heap_used_now);
    if (m) {
        f.trend.add(*m, static_cast<double>(horizon_.count()));
        o.latest = m;
        o.latest_ms = p.at_ms;
    } else if (j.summary->old_gen && j.summary->old_gen->max_capacity > 0 &&
               (f.tracker.family() == collector_family::shenandoah || (j.heap_reading_only && j.heap_used_now))) {
        // Shenandoah's used bytes are live, and so is GC.heap_info's figure of a ZGC JVM asked
        // during a cycle: they join the trend, whose floor keeps only what a later measurement
        // confirms (heap_trend.h). Shenandoah's cycles come seconds apart at first.
        after_collection reading;
        reading.at = seconds;
        reading.used = j.heap_reading_only ? *j.heap_used_now : j.summary->old_gen->used;
        reading.max = j.summary->old_gen->max_capacity;
        f.trend.add(reading, static_cast<double>(horizon_.count()));
    }
    o.collector = f.tracker.family();
    o.young_measures = f.tracker.young_measures();
    // The trend over the shortest window of the predicting rules that select the JVM.
    o.window = default_window;
    bool first = true;
    for (const dump_rule& rule : rules_)
        if (rule.predict_full_within && selects(rule.select, j.jvm, *j.summary, j.user_name)) {
            o.window = first ? rule.predict_window : std::min(o.window, rule.predict_window);
            first = false;
        }
    o.prediction = {};
    o.state = f.trend.predict(static_cast<double>(o.window.count()), o.prediction);
    return m;
}

void rule_watcher::evaluate(const poll_result& p) {
    if (!p.problem.empty()) {
        log_->warn("rules: cannot find the JVMs: {}", p.problem);
        return;
    }
    std::set<jvm_identity> alive;
    for (const polled_jvm& j : p.jvms) {
        alive.insert(j.id);
        if (j.starting) continue;
        followed& f = followed_[j.id];
        const auto measured = follow(f, j, p);
        const jvm_perf_summary& selected_by = j.summary ? *j.summary : j.command_summary;
        jvm_sample sample;
        sample.at = p.at;
        if (j.summary) {
            sample.collector = f.tracker.family();
            sample.measured = measured;
            sample.trend = &f.trend;
            sample.gc_ticks = j.summary->gc_ticks;
            sample.hrt_ticks = j.summary->hrt_ticks;
            sample.hrt_frequency = j.summary->hrt_frequency;
        }
        if (j.memory) {
            sample.resident = j.memory->resident;
            sample.memory_limit = j.memory->limit.bytes;
            sample.limit_source = j.memory->limit.source;
            if (memory_horizon_.count() > 0 && j.memory->limit.bytes) {
                after_collection reading;
                reading.at = std::chrono::duration<double>(p.at.time_since_epoch()).count();
                reading.used = j.memory->resident;
                reading.max = *j.memory->limit.bytes;
                reading.collections = 1;  // every reading is a measurement: nothing waits to be confirmed
                f.memory.add(reading, static_cast<double>(memory_horizon_.count()));
                sample.memory_trend = &f.memory;
            }
        }
        for (const dump_rule& rule : rules_) {
            if (!selects(rule.select, j.jvm, selected_by, j.user_name)) continue;
            auto reason = policy_.observe(rule, j.id, sample);
            if (!reason) continue;
            auto job = dump_(j.id, rule);
            const auto asked = policy_clock::now();  // the cooldown and the schedule count from here
            if (job) {
                policy_.record(rule.name, j.id, dump_outcome::submitted, asked);
                log_->info("rule {}: {} pid {} ({}){}: {}", rule.name,
                           rule.action == rule_action::sample ? "sampling the allocations of" : "dumping", j.id.pid,
                           selected_by.main_class, *job, *reason);
            } else if (job.error().code == error_code::busy) {
                policy_.record(rule.name, j.id, dump_outcome::busy, asked);
                log_->debug("rule {}: pid {} not dumped now: {}", rule.name, j.id.pid, job.error().message);
            } else {
                policy_.record(rule.name, j.id, dump_outcome::refused, asked);
                log_->warn("rule {}: cannot dump pid {} ({}): {} (asked because {})", rule.name, j.id.pid,
                           selected_by.main_class, job.error().message, *reason);
            }
        }
    }
    policy_.retain_jvms(alive);
    std::erase_if(followed_, [&](const auto& kv) { return !alive.contains(kv.first); });
    std::map<jvm_identity, heap_outlook> outlooks;
    for (const auto& [id, f] : followed_) outlooks.emplace(id, f.outlook);
    std::lock_guard lock(outlooks_mu_);
    outlooks_ = std::move(outlooks);
}

std::optional<heap_outlook> rule_watcher::outlook_of(const jvm_identity& id) const {
    std::lock_guard lock(outlooks_mu_);
    auto it = outlooks_.find(id);
    if (it == outlooks_.end()) return std::nullopt;
    return it->second;
}

std::map<jvm_identity, heap_outlook> rule_watcher::outlooks() const {
    std::lock_guard lock(outlooks_mu_);
    return outlooks_;
}

}  // namespace heapd::daemon
