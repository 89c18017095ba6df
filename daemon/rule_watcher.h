#pragma once
// Dump rules at work in the daemon: every poll interval the JVMs are found and their hsperfdata
// read (attach::discover_jvms, read_jvm_facts: /proc and small files, never an attach) on a thread
// of the watcher's own, so the io_context thread never waits on it; the results come back to the
// io_context thread, where each rule's selector (rule_match.h) and policy (rule_policy.h) decide,
// and dumps are asked for through a dump function (the request handler's dump_for_rule). One log
// line per dump a rule asks for, with the reason.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <spdlog/logger.h>

#include "attach/jvm_discovery.h"
#include "config.h"
#include "formats/protocol.h"
#include "job.h"
#include "rule_policy.h"

namespace heapd::daemon {

// Polls the JVMs for the dump rules and asks for the dumps they decide on.
class rule_watcher {
public:
    // Asks for a dump of the JVM for rule, on the io_context thread: the job queued, or why not
    // (error_kind::busy when the JVM is being dumped already or too many jobs wait).
    using dump_function =
        std::function<wire::wire_result<job_record>(const jvm_identity& jvm, const dump_rule& rule)>;

    rule_watcher(boost::asio::io_context& io, dump_function dump, std::shared_ptr<spdlog::logger> log);
    ~rule_watcher();
    rule_watcher(const rule_watcher&) = delete;
    rule_watcher& operator=(const rule_watcher&) = delete;

    // Replaces the rules and the poll interval, on the io_context thread. The state of rules that
    // remain (by name) is kept; no rules, no polling. The first poll after rules are set runs at once.
    void set_rules(std::vector<dump_rule> rules, std::chrono::milliseconds poll_interval);
    const std::vector<dump_rule>& rules() const { return rules_; }
    const rule_policy& policy() const { return policy_; }
    // Polls done so far (their results evaluated).
    std::uint64_t polls() const { return polls_; }

private:
    // A JVM as one poll found it.
    struct polled_jvm {
        attach::discovered_jvm jvm;
        jvm_identity id;
        std::optional<jvm_perf_summary> summary;  // when its hsperfdata could be read
        std::string user_name;                    // of jvm.uid, "" when it has none
    };
    // What one poll found.
    struct poll_result {
        policy_clock::time_point at;
        std::vector<polled_jvm> jvms;
        std::string problem;  // discovery failed: nothing is known
    };
    static poll_result poll_jvms();
    void arm(std::chrono::milliseconds after);
    void start_poll();
    void evaluate(const poll_result& p);

    boost::asio::io_context& io_;
    dump_function dump_;
    std::shared_ptr<spdlog::logger> log_;
    boost::asio::steady_timer timer_;
    std::vector<dump_rule> rules_;
    std::chrono::milliseconds poll_interval_{5000};
    rule_policy policy_;
    std::uint64_t generation_ = 0;  // of the armed timer; a stale expiry is ignored
    bool polling_ = false;          // a poll runs on the sampler thread
    std::uint64_t polls_ = 0;
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // polls in flight hold it weakly
    boost::asio::thread_pool sampler_{1};
};

} // namespace heapd::daemon
