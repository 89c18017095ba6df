#pragma once
// When dump rules (config.h: dump_rule) dump a JVM, decided from samples of its hsperfdata: pure
// logic with no I/O and no clock of its own (samples carry their time), so tests feed it synthetic
// samples. State is kept per (rule, JVM), a JVM being a pid and its process start time.
//
// Conditions (a rule may give several; any that holds asks for a dump, the reason naming each):
// - every: the first dump one interval after the rule first saw the JVM, then one interval after
//   the rule's last dump of it (a refused attempt does not move the schedule; the cooldown does
//   hold it back).
// - old_gen_percent: the occupancy after collections (formats/hsperf/gc_occupancy.h: the old generation,
//   or the heap for ZGC and Shenandoah, as the latest collection left it, measured the way the JVM's
//   collector allows) is measured at each sample where collections that measure ended since the
//   previous sample (the first sample of a JVM only sets the counts); old_gen_collections such
//   measurements in a row above the threshold ask for a dump. A measurement at or below the
//   threshold starts the count again, and so does a dump.
// - predict_full_within: the JVM's heap trend (daemon/rules/heap_trend.h) over the last predict_window
//   says the old generation (or heap) will be full within this time: the floor the collections
//   leave has risen steadily over the window.
// - memory_percent: the process's resident memory over the limit that holds it (its memory cgroup's,
//   else the host's memory), read at each poll; memory_polls polls in a row above the threshold ask
//   for a dump. A poll at or below it starts the count again, and so does a dump.
// - memory_full_within: the process's resident memory, read at each poll and kept by the watcher as
//   a trend with the heap trend's rules (heap_trend.h: a floor that rose steadily over the last
//   memory_window, the limit as its maximum), says it reaches the limit within this time.
// - gc_time_percent: the share of the JVM's time spent in collections (all collectors' time,
//   sun.gc.collector.N.time, over the JVM's own clock sun.os.hrt.ticks) between the newest sample
//   and the latest one at least gc_window older, above the threshold. Nothing is measured until the
//   samples span gc_window. A dump starts the window again.
// Limits, per rule and JVM: no dump within cooldown of the last attempt (a dump submitted, or one
// refused, so a failing JVM is not hammered); at most max_dumps dumps submitted (0: no limit). A
// dump that could not start because the JVM is being dumped already (busy) counts as nothing, and
// the rule asks again at the next sample. The window keeps at most max_window_samples samples (when
// it would hold more, the one whose neighbours are closest goes: the rest stay evenly spread, so the
// window overshoots gc_window by about gc_window / max_window_samples at most), so memory per (rule,
// JVM) is bounded; the state of a JVM no longer running, or of a rule no longer configured, is
// forgotten.
#include <sys/types.h>

#include <chrono>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/jvms/jvm_identity.h"
#include "daemon/rules/heap_trend.h"
#include "formats/hsperf/gc_occupancy.h"
#include "formats/hsperf/hsperfdata_summary.h"

namespace heapd::daemon {

using policy_clock = std::chrono::steady_clock;

// What rules read of one JVM at one poll.
struct jvm_sample {
    policy_clock::time_point at;  // when the daemon read it
    collector_family collector = collector_family::unknown;
    std::optional<after_collection> measured;  // when collections that measure ended since the last poll
    const heap_trend* trend = nullptr;         // the JVM's measurements so far (valid during observe)
    std::int64_t gc_ticks = 0;                 // all collectors' time, in hrt ticks
    std::int64_t hrt_ticks = 0;                // the JVM's clock
    std::int64_t hrt_frequency = 0;            // hrt ticks per second; 0 when unknown
    // The process's resident memory and the limit that holds it, read when a rule asks for them.
    std::optional<std::int64_t> resident, memory_limit;
    std::string limit_source;                  // "cgroup v1 /a", "the host's memory"
    const heap_trend* memory_trend = nullptr;  // the resident memory so far against the limit (valid during observe)
};

// A point of a rule's GC-time window: all collectors' time and the JVM's clock, in hrt ticks.
struct gc_point {
    std::int64_t gc_ticks = 0, hrt_ticks = 0;
};

// What became of a dump a rule asked for.
enum class dump_outcome {
    submitted,  // queued: counts toward max_dumps, starts the cooldown and the next schedule interval
    refused,    // could not be asked (JVM gone, not permitted, ...): starts the cooldown only
    busy,       // the JVM is being dumped already or too many jobs wait: as if never asked
};

// The rules' state for every JVM they selected, and their decisions.
class rule_policy {
public:
    static constexpr std::size_t max_window_samples = 256;

    // Feeds a sample of JVM id, which `rule` selects; returns why to dump it now, or nothing. Each
    // rule and JVM is fed its samples in time order.
    std::optional<std::string> observe(const dump_rule& rule, const jvm_identity& id, const jvm_sample& s);
    // What became of the dump observe() asked for, at time at.
    void record(const std::string& rule, const jvm_identity& id, dump_outcome outcome, policy_clock::time_point at);
    // Forgets the state of rules not among these (by name); that of the others is kept.
    void retain_rules(const std::vector<dump_rule>& rules);
    // Forgets the state of JVMs not alive.
    void retain_jvms(const std::set<jvm_identity>& alive);
    // The dumps submitted by rule for JVM id.
    unsigned dumps(const std::string& rule, const jvm_identity& id) const;
    // (rule, JVM) pairs with state, and samples held in all windows.
    std::size_t tracked() const;
    std::size_t window_samples() const;

private:
    // One rule's state for one JVM.
    struct state {
        policy_clock::time_point first_seen;
        std::optional<policy_clock::time_point> last_dump;     // submitted
        std::optional<policy_clock::time_point> last_attempt;  // submitted or refused
        unsigned dumps = 0;
        unsigned streak = 0;         // measurements in a row above the threshold
        unsigned memory_streak = 0;  // polls in a row with resident memory above memory_percent
        double last_occupancy = 0;   // percent, at the last measurement
        std::deque<gc_point> window;
    };
    std::optional<std::string> old_gen_reason(const dump_rule& rule, state& st, const jvm_sample& s);
    std::optional<std::string> gc_time_reason(const dump_rule& rule, state& st, const jvm_sample& s);
    std::optional<std::string> predict_reason(const dump_rule& rule, const jvm_sample& s);
    std::optional<std::string> memory_reason(const dump_rule& rule, state& st, const jvm_sample& s);
    std::optional<std::string> memory_trend_reason(const dump_rule& rule, const jvm_sample& s);

    std::map<std::string, std::map<jvm_identity, state>> states_;  // by rule name
};

// "1.5 MiB/min", "120 KiB/min": a growth rate as rules' reasons write it.
std::string byte_rate_words(double bytes_per_second);

}  // namespace heapd::daemon
