#pragma once
// Where a JVM's heap is heading: the occupancy its collections leave behind (gc_occupancy.h), kept
// over time, and an estimate of when it will be full. The floor is what the heap returns to: at
// each measurement, the lowest measurement from then on (a later collection that freed more shows
// that the earlier figure held garbage). A leak raises the floor; a heap that fills with garbage
// and is collected (a sawtooth) or that was filled once (a cache) does not.
//
// The estimate (predict_full) asks for evidence before it says anything, so that one burst of
// allocation or one slow collection cycle does not look like a leak:
// - at least min_points measurements in the window, spanning at least half of it;
// - the window split into three equal spans of time, each holding a measurement, and the floor
//   higher at the start of each span than at the start of the one before, and in the middle of the
//   last span than at its start (by at least min_rise_share of the maximum, half that for the last
//   half span): a steady rise that goes on, not a step and not a rise that stopped;
// - the growth rate is the least-squares slope of the floor over the window (bytes per second),
//   and it must be positive.
// The heap is then full (its maximum) after (max - level) / rate seconds, level being the fitted
// floor at the newest measurement, kept between the floor in the middle of the last span and the
// newest measurement. JVMs usually fail a little before 100%: a bound on this estimate should leave room.
#include <cstddef>
#include <deque>
#include <optional>

#include "formats/hsperf/gc_occupancy.h"

namespace heapd::daemon {

// An estimate of when the heap will be full.
struct full_prediction {
    double seconds_to_full = 0;   // from the newest measurement
    double bytes_per_second = 0;  // the floor's growth
    double floor_percent = 0;     // the floor now (level above), percent of max
    double span_seconds = 0;      // between the oldest and the newest measurement used
    std::size_t points = 0;       // measurements used
};

// Why there is no estimate, or that there is one.
enum class trend_state {
    learning,  // too few measurements, or too short a span, in the window
    steady,    // enough of them, and the floor does not rise steadily
    rising,    // an estimate
};

// The measurements of one JVM, bounded. Memory: at most max_points measurements of 40 bytes each.
class heap_trend {
public:
    static constexpr std::size_t max_points = 512;
    static constexpr std::size_t min_points = 6;
    static constexpr double min_rise_share = 0.01;

    // Adds a measurement (in time order; one older than the newest starts again). Measurements
    // older than horizon seconds before it go; beyond max_points, the one whose neighbours are
    // closest goes, so what stays is spread evenly over the same span.
    void add(const after_collection& m, double horizon_seconds);
    const std::deque<after_collection>& points() const { return points_; }
    const after_collection* newest() const { return points_.empty() ? nullptr : &points_.back(); }

    // The estimate over the measurements of the last window_seconds (see above), or why none.
    trend_state predict(double window_seconds, full_prediction& out) const;

private:
    std::deque<after_collection> points_;
};

// Drops elements but the first and the last until at most limit remain, each time the one whose
// neighbours are closest by position(element): what is left stays as evenly spread as it can over
// the same span.
template <class T, class Position>
void thin_evenly(std::deque<T>& items, std::size_t limit, Position position) {
    while (items.size() > limit && items.size() > 2) {
        std::size_t drop = 1;
        auto narrowest = position(items[2]) - position(items[0]);
        for (std::size_t i = 2; i + 1 < items.size(); ++i)
            if (auto gap = position(items[i + 1]) - position(items[i - 1]); gap < narrowest) {
                narrowest = gap;
                drop = i;
            }
        items.erase(items.begin() + static_cast<std::ptrdiff_t>(drop));
    }
}

}  // namespace heapd::daemon
