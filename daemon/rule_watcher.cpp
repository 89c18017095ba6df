#include "rule_watcher.h"

#include <algorithm>
#include <map>
#include <set>

#include <boost/asio/post.hpp>

#include "attach/process_info.h"
#include "jvm_facts.h"
#include "rule_match.h"

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
    ++generation_;
    timer_.cancel();
    if (rules_.empty()) {
        log_->info("rules: none, no polling");
        return;
    }
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
    if (polling_ || rules_.empty()) return;
    polling_ = true;
    boost::asio::post(sampler_, [this, alive = std::weak_ptr<int>(alive_)] {
        auto result = std::make_shared<poll_result>(poll_jvms());
        boost::asio::post(io_, [this, alive, result] {
            if (alive.expired()) return;
            polling_ = false;
            ++polls_;
            evaluate(*result);
            if (!rules_.empty()) arm(poll_interval_);
        });
    });
}

rule_watcher::poll_result rule_watcher::poll_jvms() {
    poll_result p;
    p.at = policy_clock::now();
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
        if (facts.summary && facts.summary->accessible) pj.summary = std::move(facts.summary);
        auto [name, fresh] = names.try_emplace(j.uid);
        if (fresh) name->second = user_name_of(j.uid);
        pj.user_name = name->second;
        p.jvms.push_back(std::move(pj));
    }
    return p;
}

void rule_watcher::evaluate(const poll_result& p) {
    if (!p.problem.empty()) {
        log_->warn("rules: cannot find the JVMs: {}", p.problem);
        return;
    }
    std::set<jvm_identity> alive;
    for (const polled_jvm& j : p.jvms) {
        alive.insert(j.id);
        if (!j.summary) continue;
        const jvm_sample sample = sample_of(*j.summary, p.at);
        for (const dump_rule& rule : rules_) {
            if (!selects(rule.select, j.jvm, *j.summary, j.user_name)) continue;
            auto reason = policy_.observe(rule, j.id, sample);
            if (!reason) continue;
            auto job = dump_(j.id, rule);
            const auto asked = policy_clock::now();  // the cooldown and the schedule count from here
            if (job) {
                policy_.record(rule.name, j.id, dump_outcome::submitted, asked);
                log_->info("rule {}: dumping pid {} ({}) as job {}: {}", rule.name, j.id.pid, j.summary->main_class,
                           job->id, *reason);
            } else if (job.error().kind == wire::error_kind::busy) {
                policy_.record(rule.name, j.id, dump_outcome::busy, asked);
                log_->debug("rule {}: pid {} not dumped now: {}", rule.name, j.id.pid, job.error().message);
            } else {
                policy_.record(rule.name, j.id, dump_outcome::refused, asked);
                log_->warn("rule {}: cannot dump pid {} ({}): {} (asked because {})", rule.name, j.id.pid,
                           j.summary->main_class, job.error().message, *reason);
            }
        }
    }
    policy_.retain_jvms(alive);
}

} // namespace heapd::daemon
