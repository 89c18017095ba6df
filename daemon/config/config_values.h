#pragma once
// The value syntaxes of the config file: durations ("30s", "10m", "6h", "1d", "1h30m", "500ms"),
// sizes ("512M", "20G", "1TiB") and arming modes ("all", "hooked", "none"), read and written back
// for people.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/config/config.h"

namespace heapd::daemon {

// A duration: one or more NUMBER UNIT pairs, units ms, s, m, h, d, w, largest first ("1h30m");
// "0" alone is zero. Nullopt when it is not one or exceeds 100 years.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

// A size in bytes: a number with an optional unit B, K, M, G, T, P (powers of 1024; KB, KiB etc.
// mean the same), any case. Nullopt when it is not one or does not fit 64 bits.
std::optional<std::uint64_t> parse_size(std::string_view text);

// A duration in the config file's syntax, largest units first: "1h30m", "500ms", "0s".
std::string duration_string(std::chrono::milliseconds d);

// A size in the config file's syntax, exact: "20G", "512M", "1000" (bytes when not a round unit).
std::string size_string(std::uint64_t bytes);

// An arming mode by its name in the config file and on heapd's command line: all, hooked, none.
std::optional<arm_mode> arm_mode_named(std::string_view name);
std::string_view arm_mode_name(arm_mode mode);

}  // namespace heapd::daemon
