#pragma once
// What the daemon knows of one JVM's heap over time (formats/hsperf/gc_occupancy.h, heap_trend.h): the
// occupancy its latest collections left and where it is heading, or why it is not watched. The rule
// watcher (rule_watcher.h) keeps it up to date; `jvms`, the metrics and the logs read it.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "daemon/rules/heap_trend.h"
#include "formats/hsperf/gc_occupancy.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {

// One JVM's heap trend as of the latest poll.
struct heap_outlook {
    bool watched = false;  // its hsperfdata is read at every poll
    std::string note;      // why it is not watched, or (watched) why nothing measures it
    collector_family collector = collector_family::unknown;
    std::optional<after_collection> latest;  // the latest measurement
    std::int64_t latest_ms = 0;              // when it was taken, ms since the epoch
    bool young_measures = true;              // Serial and Parallel: whether young collections measure
    trend_state state = trend_state::learning;
    full_prediction prediction;        // when state is rising
    std::chrono::seconds window{600};  // of the trend
};

// The `heap_trend` object of a `jvms` row: {watched, note? (why not watched, or not measured), collector, measured
// ("old generation" or "heap"), after_gc {used, max, percent, at_ms, full}?, young_measures?, trend ("learning",
// "steady", "rising"), window_seconds, predicted_full_seconds?, growth_bytes_per_second?, floor_percent?}.
wire::json to_json(const heap_outlook& o);

}  // namespace heapd::daemon
