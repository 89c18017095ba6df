#pragma once
// A running JVM as the daemon keeps state about it over time (rules, arming): its pid and its
// process start time (clock ticks since boot, /proc/PID/stat), so a pid reused by a new JVM is a new
// JVM.
#include <sys/types.h>

#include <compare>
#include <cstdint>

namespace heapd::daemon {

// A JVM's pid and process start time.
struct jvm_identity {
    pid_t pid = 0;
    std::uint64_t start_time = 0;
    auto operator<=>(const jvm_identity&) const = default;
};

}  // namespace heapd::daemon
