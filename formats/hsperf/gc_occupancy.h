#pragma once
// The occupancy of a JVM's heap after its collections, as each HotSpot collector lets hsperfdata
// tell it. Between collections the heap holds garbage, so used bytes read at any moment say little;
// what a collection leaves behind is the figure that tracks what is live. Collectors publish it
// differently (JDK 17's counters; older JDKs name them the same way):
//
// | collector (sun.gc.policy.name / collector names) | measured      | a measurement after                   |
// |--------------------------------------------------|---------------|---------------------------------------|
// | G1 ("GarbageFirst"; collectors 0 young and mixed | old           | any pause: young, mixed, full, and    |
// | pauses, 1 full, 2 concurrent-cycle pauses)       | generation    | the remark and cleanup of a cycle     |
// | Serial ("Copy:MSC"), Parallel ("ParScav:MSC")    | old           | a full collection (collector 1); a    |
// | (collectors 0 young, 1 full)                     | generation    | young one (0) while trusted, below    |
// | ZGC ("Z concurrent cycle pauses")                | whole heap    | a cycle, read through attach (below)  |
// | Shenandoah ("Shenandoah full", which also counts | whole heap    | a cycle                               |
// | its concurrent cycles; "Shenandoah partial")     |               |                                       |
// | anything else                                    | generation 1  | any collection                        |
//
// G1 updates the old generation's counters at its pauses (and when it allocates a humongous object
// there), so the value read is the one the last pause left. Shenandoah updates the heap's used
// bytes as the application allocates: the value read at the first look after a cycle holds what
// was allocated since it ended, an upper bound of what the cycle left (the daemon also adds every
// poll's figure to the heap trend, heap_trend.h, whose floor keeps what later cycles confirm). ZGC (JDK 17) updates
// them only at its pauses, before relocation frees what the cycle collected, so its hsperfdata shows the heap about as
// full as it was when the cycle started; the heap's used bytes after a cycle come from GC.heap_info through attach
// instead ("ZHeap used 30M, ..."), asked once a cycle has ended (the caller's part: feed takes the figure and measures
// when a cycle ended since the last one).
//
// Serial and Parallel free the old generation's garbage only in full collections, which they run
// when it is full: after a young collection the old generation holds everything promoted since the
// last full one, dead or not. Nobody can tell a leak from promoted garbage there without a full
// collection; so young collections measure while the latest full collection freed less than 5% of
// the old generation's maximum (or none has run yet): what gets promoted then stays, as in a leak.
// Once a full collection freed more, the old generation is known to fill with garbage between full
// collections and only full collections measure, until one frees little again.
#include <cstdint>
#include <optional>
#include <string_view>

#include "formats/hsperf/hsperfdata_summary.h"

namespace heapd {
inline namespace hsperf {

// The HotSpot collector a JVM runs, as far as its hsperfdata tells.
enum class collector_family { serial, parallel, g1, z, shenandoah, unknown };

collector_family family_of(const jvm_perf_summary& s);
// "Serial", "Parallel", "G1", "ZGC", "Shenandoah", "unknown".
std::string_view name_of(collector_family f);
// "old generation", or "heap" for the collectors that have a single generation.
std::string_view measured_space(collector_family f);

// One measurement: the old generation (or heap) as the latest collection left it.
struct after_collection {
    double at = 0;                 // seconds, on the clock of whoever fed the summary
    std::int64_t used = 0;         // bytes
    std::int64_t max = 0;          // bytes it may grow to
    std::int64_t collections = 0;  // collections since the previous summary fed
    bool full = false;             // a full collection among them (Serial, Parallel, G1): nothing dead was left
    // used / max in percent (0 when max is unknown).
    double percent() const;
};

// Follows one JVM's hsperfdata summaries, fed in time order, and tells the occupancy after the
// collections that ended between two of them. Memory: a few counters.
class occupancy_tracker {
public:
    // A full collection that frees more than this share of the old generation's maximum shows that
    // the old generation fills with garbage between full collections (Serial and Parallel).
    static constexpr double garbage_share = 0.05;

    // The measurement when collections ended since the previous summary fed (and they measure, see
    // above); nothing for the first summary, which only sets the counts. Counters going back (not
    // the same JVM) start again.
    // For ZGC, heap_used_now is the heap's used bytes as GC.heap_info gave them at about `at`;
    // without it a ZGC JVM measures nothing.
    std::optional<after_collection> feed(const jvm_perf_summary& s, double at,
                                         std::optional<std::int64_t> heap_used_now = std::nullopt);
    collector_family family() const { return family_; }
    // Whether young collections measure (Serial and Parallel; see above).
    bool young_measures() const { return young_trusted_; }

private:
    collector_family family_ = collector_family::unknown;
    bool started_ = false;
    std::int64_t young_ = 0, full_ = 0, other_ = 0;  // collections so far
    std::int64_t last_used_ = 0;                     // of the measured space at the previous summary
    std::int64_t measured_other_ = 0;                // ZGC: collections at the last measurement
    bool young_trusted_ = true;
};

// The heap's used bytes in the output of the GC.heap_info diagnostic command of a ZGC JVM
// (" ZHeap           used 30M, capacity 64M, max capacity 64M"), nothing when it has no such line.
std::optional<std::int64_t> zgc_heap_used(std::string_view heap_info);

}  // namespace hsperf
}  // namespace heapd
