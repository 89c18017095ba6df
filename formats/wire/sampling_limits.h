#pragma once
// The bounds of a sampling's settings, in one place: what `heapctl sites`/`cpu` and `heapd
// sites`/`cpu` accept on their command lines is what the daemon's `sites` request accepts.
#include <cstdint>

namespace heapd::wire {

inline constexpr double max_sampling_seconds = 86400;                               // --seconds: a day
inline constexpr std::int64_t max_sampling_interval = (std::int64_t{1} << 31) - 1;  // --interval, bytes (from 0)
inline constexpr int min_sampling_depth = 1, max_sampling_depth = 64;               // --depth, frames
inline constexpr int min_cpu_period_ms = 1, max_cpu_period_ms = 1000;               // --period
inline constexpr double min_sites_cutoff = 0, max_sites_cutoff = 1;                 // --cutoff, a share
inline constexpr std::uint64_t max_sampling_rows = 1'000'000;                       // --top

}  // namespace heapd::wire
