#include "formats/hsperf/gc_occupancy.h"

#include <algorithm>

namespace heapd {
inline namespace hsperf {
namespace {

// Invocations of collector index, 0 when the JVM has none.
std::int64_t invocations(const jvm_perf_summary& s, int index) {
    for (const hsperf_collector& c : s.collectors)
        if (c.index == index) return std::max<std::int64_t>(c.invocations, 0);
    return 0;
}

std::int64_t all_invocations(const jvm_perf_summary& s) {
    std::int64_t n = 0;
    for (const hsperf_collector& c : s.collectors) n += std::max<std::int64_t>(c.invocations, 0);
    return n;
}

}  // namespace

collector_family family_of(const jvm_perf_summary& s) {
    if (s.gc_policy == "GarbageFirst") return collector_family::g1;
    if (s.gc_policy == "ParScav:MSC") return collector_family::parallel;
    if (s.gc_policy == "Copy:MSC") return collector_family::serial;
    for (const hsperf_collector& c : s.collectors) {
        if (c.name.starts_with("Z ")) return collector_family::z;
        if (c.name.starts_with("Shenandoah")) return collector_family::shenandoah;
    }
    return collector_family::unknown;
}

std::string_view name_of(collector_family f) {
    switch (f) {
    case collector_family::serial: return "Serial";
    case collector_family::parallel: return "Parallel";
    case collector_family::g1: return "G1";
    case collector_family::z: return "ZGC";
    case collector_family::shenandoah: return "Shenandoah";
    case collector_family::unknown: break;
    }
    return "unknown";
}

std::string_view measured_space(collector_family f) {
    return f == collector_family::z || f == collector_family::shenandoah ? "heap" : "old generation";
}

double after_collection::percent() const {
    return max > 0 ? static_cast<double>(used) / static_cast<double>(max) * 100 : 0;
}

std::optional<after_collection> occupancy_tracker::feed(const jvm_perf_summary& s, double at,
                                                        std::optional<std::int64_t> heap_used_now) {
    const collector_family family = family_of(s);
    const bool generational =
        family == collector_family::serial || family == collector_family::parallel || family == collector_family::g1;
    // Collectors 0 and 1 are young and full for the generational collectors; the rest is "other".
    const std::int64_t young = generational ? invocations(s, 0) : 0;
    const std::int64_t full = generational ? invocations(s, 1) : 0;
    const std::int64_t other = all_invocations(s) - young - full;
    const std::int64_t used = s.old_gen ? s.old_gen->used : 0;
    const std::int64_t max =
        s.old_gen ? (s.old_gen->max_capacity > 0 ? s.old_gen->max_capacity : s.old_gen->capacity) : 0;

    const bool same = started_ && family == family_ && young >= young_ && full >= full_ && other >= other_;
    const std::int64_t new_young = same ? young - young_ : 0, new_full = same ? full - full_ : 0,
                       new_other = same ? other - other_ : 0;
    const std::int64_t before = last_used_;
    if (!same) {
        young_trusted_ = true;
        measured_other_ = other;
    }
    started_ = true;
    family_ = family;
    young_ = young;
    full_ = full;
    other_ = other;
    last_used_ = used;
    if (family == collector_family::z) {
        // Measured through attach, once per cycle ended since the last measurement.
        if (!same || !heap_used_now || other <= measured_other_ || max <= 0) return std::nullopt;
        after_collection m;
        m.at = at;
        m.used = std::clamp<std::int64_t>(*heap_used_now, 0, max);
        m.max = max;
        m.collections = other - measured_other_;
        measured_other_ = other;
        return m;
    }
    if (!s.old_gen || max <= 0 || new_young + new_full + new_other == 0) return std::nullopt;

    after_collection m;
    m.at = at;
    m.used = used;
    m.max = max;
    m.collections = new_young + new_full + new_other;
    m.full = generational && new_full > 0;
    if (family == collector_family::serial || family == collector_family::parallel) {
        if (new_full > 0) {
            // What the full collection freed: at least what was there before it, less what is left.
            young_trusted_ = static_cast<double>(before - used) <= garbage_share * static_cast<double>(max);
        } else if (!young_trusted_) {
            return std::nullopt;
        }
    }
    return m;
}

std::optional<std::int64_t> zgc_heap_used(std::string_view heap_info) {
    const std::size_t line = heap_info.find("ZHeap");
    if (line == std::string_view::npos) return std::nullopt;
    const std::size_t used = heap_info.find("used ", line);
    if (used == std::string_view::npos || heap_info.find('\n', line) < used) return std::nullopt;
    std::size_t i = used + 5;
    std::int64_t value = 0;
    const std::size_t digits = i;
    while (i < heap_info.size() && heap_info[i] >= '0' && heap_info[i] <= '9' && value < (std::int64_t{1} << 50))
        value = value * 10 + (heap_info[i++] - '0');
    if (i == digits || i >= heap_info.size()) return std::nullopt;
    switch (heap_info[i]) {
    case 'K': return value << 10;
    case 'M': return value << 20;
    case 'G': return value << 30;
    case 'B': return value;
    default: return std::nullopt;
    }
}

}  // namespace hsperf
}  // namespace heapd
