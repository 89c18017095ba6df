#include "daemon/rules/heap_trend.h"

#include <algorithm>
#include <iterator>
#include <vector>

namespace heapd::daemon {

void heap_trend::add(const after_collection& m, double horizon_seconds) {
    if (!points_.empty() && m.at < points_.back().at) points_.clear();
    points_.push_back(m);
    while (points_.size() > 1 && points_.front().at < m.at - horizon_seconds) points_.pop_front();
    thin_evenly(points_, max_points, [](const after_collection& p) { return p.at; });
}

trend_state heap_trend::predict(double window_seconds, full_prediction& out) const {
    // Up to the newest measurement after a collection: readings after it are not confirmed yet.
    auto end = points_.end();
    while (end != points_.begin() && std::prev(end)->collections == 0) --end;
    if (end == points_.begin()) return trend_state::learning;
    const after_collection& newest = *std::prev(end);
    const double now = newest.at;
    auto first =
        std::find_if(points_.begin(), end, [&](const after_collection& p) { return p.at >= now - window_seconds; });
    const auto n = static_cast<std::size_t>(end - first);
    if (n < min_points || now - first->at < window_seconds / 2) return trend_state::learning;

    // The floor: at each measurement, the lowest one from then on.
    std::vector<double> floor(n);
    double lowest = static_cast<double>(newest.used);
    for (std::size_t i = n; i-- > 0;) {
        lowest = std::min(lowest, static_cast<double>(first[static_cast<std::ptrdiff_t>(i)].used));
        floor[i] = lowest;
    }
    const double start = first->at, span = now - start;
    const double max = static_cast<double>(newest.max);
    if (span <= 0 || max <= 0) return trend_state::learning;

    // The floor at the first measurement from each mark on: the start of each third of the span and
    // the middle of the last third, so that a rise that stopped in the last third does not count.
    constexpr double marks[] = {0, 2, 4, 5};  // sixths of the span
    std::optional<double> at_mark[4];
    for (std::size_t i = 0; i < n; ++i) {
        const double t = first[static_cast<std::ptrdiff_t>(i)].at - start;
        for (std::size_t k = 0; k < 4; ++k)
            if (!at_mark[k] && t >= marks[k] * span / 6) at_mark[k] = floor[i];
    }
    // Each third must hold a measurement.
    for (std::size_t k = 0; k < 3; ++k) {
        const double from = start + span * static_cast<double>(k) / 3,
                     to = start + span * static_cast<double>(k + 1) / 3;
        if (std::none_of(first, end, [&](const after_collection& p) { return p.at >= from && p.at <= to; }))
            return trend_state::learning;
    }
    const double rise = min_rise_share * max;
    if (*at_mark[1] - *at_mark[0] < rise || *at_mark[2] - *at_mark[1] < rise || *at_mark[3] - *at_mark[2] < rise / 2)
        return trend_state::steady;

    // Least squares of the floor over time.
    double mean_t = 0, mean_f = 0;
    for (std::size_t i = 0; i < n; ++i) {
        mean_t += first[static_cast<std::ptrdiff_t>(i)].at - start;
        mean_f += floor[i];
    }
    mean_t /= static_cast<double>(n);
    mean_f /= static_cast<double>(n);
    double stt = 0, stf = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double dt = first[static_cast<std::ptrdiff_t>(i)].at - start - mean_t;
        stt += dt * dt;
        stf += dt * (floor[i] - mean_f);
    }
    if (stt <= 0 || stf <= 0) return trend_state::steady;
    const double slope = stf / stt;
    const double fitted = mean_f + slope * (span - mean_t);
    const double level = std::clamp(fitted, *at_mark[3], std::max(*at_mark[3], static_cast<double>(newest.used)));

    out.bytes_per_second = slope;
    out.seconds_to_full = std::max(0.0, (max - level) / slope);
    out.floor_percent = level / max * 100;
    out.span_seconds = span;
    out.points = n;
    return trend_state::rising;
}

}  // namespace heapd::daemon
