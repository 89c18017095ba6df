#pragma once
// The JVMs watched, and dump rules at work in the daemon: every poll interval the JVMs are found
// and their hsperfdata read (attach::discover_jvms, read_jvm_facts: /proc and small files, never an
// attach) on a thread of the watcher's own, so the io_context thread never waits on it; the results
// come back to the io_context thread, where each JVM's occupancy after collections and heap trend
// are followed (formats/hsperf/gc_occupancy.h, heap_trend.h; published as heap_outlook for `jvms` and the
// metrics, rules or not), and each rule's selector (rule_match.h) and policy (rule_policy.h)
// decide; dumps are asked for through a dump function (the request handler's dump_for_rule). One
// log line per dump a rule asks for, with the reason, and one per JVM that cannot be watched.
//
// A JVM without hsperfdata (-XX:-UsePerfData, -XX:+PerfDisableSharedMem) is found through its
// process; it is selected by its command line, so schedules apply to it, but nothing measures its
// heap: its outlook says so, and the log says it once.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/logger.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "attach/jvm_discovery.h"
#include "daemon/config/config.h"
#include "daemon/jvms/memory_probe.h"
#include "daemon/rules/heap_outlook.h"
#include "daemon/rules/rule_policy.h"
#include "daemon/store/job_record.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {

// Polls the JVMs for the dump rules and asks for the dumps they decide on.
class rule_watcher {
public:
    // Does what the rule says to the JVM (a dump; or sampling by heapd's agent), on the io_context
    // thread: what was done, for the log ("as job 17"), or why not (error_code::busy when the JVM is
    // being dumped already or too many jobs wait).
    using dump_function = std::function<result<std::string>(const jvm_identity& jvm, const dump_rule& rule)>;

    rule_watcher(boost::asio::io_context& io, dump_function dump, std::shared_ptr<spdlog::logger> log);
    ~rule_watcher();
    rule_watcher(const rule_watcher&) = delete;
    rule_watcher& operator=(const rule_watcher&) = delete;

    // Replaces the rules and the poll interval, on the io_context thread. The state of rules that
    // remain (by name) is kept. The JVMs are polled with or without rules (their outlooks); the
    // first poll after rules are set runs at once.
    void set_rules(std::vector<dump_rule> rules, std::chrono::milliseconds poll_interval);
    const std::vector<dump_rule>& rules() const { return rules_; }
    const rule_policy& policy() const { return policy_; }
    // Polls done so far (their results evaluated).
    std::uint64_t polls() const { return polls_; }
    // The outlook of a JVM as of the latest poll; nothing for a JVM not seen yet. Any thread.
    std::optional<heap_outlook> outlook_of(const jvm_identity& id) const;
    // Every outlook as of the latest poll, by JVM. Any thread.
    std::map<jvm_identity, heap_outlook> outlooks() const;
    // The trend window used for a JVM that no predicting rule selects.
    static constexpr std::chrono::seconds default_window{600};

private:
    // A JVM as one poll found it.
    struct polled_jvm {
        attach::discovered_jvm jvm;
        jvm_identity id;
        std::optional<jvm_perf_summary> summary;    // when its hsperfdata could be read
        std::string problem;                        // why not, or why it is not measured
        jvm_perf_summary command_summary;           // without hsperfdata: what its command line says
        std::optional<std::int64_t> heap_used_now;  // ZGC: GC.heap_info's figure, when asked this poll
        bool heap_reading_only = false;             // ... during a cycle: no measurement, a reading
        bool starting = false;                      // its hsperfdata is not complete yet
        std::string user_name;                      // of jvm.uid, "" when it has none
        std::optional<memory_glance> memory;        // resident memory and limit, when a rule reads them
    };
    // What one poll found.
    struct poll_result {
        policy_clock::time_point at;
        std::int64_t at_ms = 0;  // the same, ms since the epoch
        std::vector<polled_jvm> jvms;
        std::string problem;  // discovery failed: nothing is known
    };
    // On the sampler thread; read_memory: each JVM's resident memory and limit too (memory_percent).
    poll_result poll_jvms(bool read_memory);
    // ZGC: asks a JVM for its heap's used bytes (GC.heap_info, through attach) once a cycle has
    // ended since it last did: its pause count changed since then and not since the previous poll
    // (so at most every other poll); when its cycles run back to back, every fourth poll, the
    // figure then being a reading for the trend only (it holds what the running cycle has not
    // freed yet). Sampler thread.
    void probe_zgc(polled_jvm& j);
    void arm(std::chrono::milliseconds after);
    void start_poll();
    void evaluate(const poll_result& p);
    // What the watcher follows of one JVM.
    struct followed {
        occupancy_tracker tracker;
        heap_trend trend;
        heap_trend memory;  // resident memory against its limit, at each poll that reads it
        heap_outlook outlook;
        bool told = false;  // the log said it is not watched
    };
    // Updates what is followed of j; the measurement this poll made, if any.
    std::optional<after_collection> follow(followed& f, const polled_jvm& j, const poll_result& p);

    boost::asio::io_context& io_;
    dump_function dump_;
    std::shared_ptr<spdlog::logger> log_;
    boost::asio::steady_timer timer_;
    std::vector<dump_rule> rules_;
    std::chrono::milliseconds poll_interval_{5000};
    rule_policy policy_;
    std::map<jvm_identity, followed> followed_;
    // What the sampler thread remembers of a ZGC JVM between polls.
    struct zgc_probe {
        std::int64_t previous = -1;  // its pause count at the previous poll
        std::int64_t probed = -1;    // at the last GC.heap_info
        std::string problem;         // why the last one gave no figure
        int unsettled = 0;           // polls since it that found a cycle running
    };
    std::map<jvm_identity, zgc_probe> probes_;       // sampler thread only
    std::chrono::seconds horizon_ = default_window;  // how long measurements are kept
    std::chrono::seconds memory_horizon_{0};         // the longest memory_window of the rules; 0: no memory trend
    mutable std::mutex outlooks_mu_;
    std::map<jvm_identity, heap_outlook> outlooks_;  // guarded by outlooks_mu_
    std::uint64_t generation_ = 0;                   // of the armed timer; a stale expiry is ignored
    bool polling_ = false;                           // a poll runs on the sampler thread
    std::uint64_t polls_ = 0;
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // polls in flight hold it weakly
    boost::asio::thread_pool sampler_{1};
};

}  // namespace heapd::daemon
