#pragma once
// The memory cgroup files of cgroup v1 and v2, read from the text the kernel writes: which cgroup a
// process is in (/proc/PID/cgroup), a limit ("max", or v1's largest page-aligned value for none),
// and the "key value" files (memory.stat, memory.events, v1's memory.oom_control).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace heapd {
inline namespace memory {

// Where a process's memory is accounted: the cgroup version and the cgroup's path from the root of
// its hierarchy ("/system.slice/app.service"), as the reader's cgroup namespace names it.
struct memory_cgroup {
    int version = 0;  // 1: the v1 memory controller's hierarchy; 2: the unified hierarchy
    std::string path;
};

// The memory cgroup in /proc/PID/cgroup: the v1 line that lists the memory controller, else the v2
// line ("0::/path"). Nothing when neither is there or the path is not absolute or holds "." or ".."
// components (never a path that leaves the hierarchy).
std::optional<memory_cgroup> memory_cgroup_of(std::string_view proc_cgroup);

// A limit file (memory.max, memory.limit_in_bytes, memory.swap.max): its bytes, or nothing for
// none ("max", or a v1 value of 2^62 or more: the kernel writes its largest page-aligned value).
// A text that is no number is none too.
std::optional<std::int64_t> parse_limit(std::string_view text);

// The value of `key` in a file of "key value" lines (memory.stat's "anon 1234", memory.events'
// "oom_kill 1", memory.oom_control's "under_oom 0"); nothing when absent or no number.
std::optional<std::int64_t> key_value(std::string_view text, std::string_view key);

// Pressure stall information for memory (/proc/pressure/memory, a v2 cgroup's memory.pressure): the
// share of wall time in which some (or all: full) non-idle tasks waited for memory, averaged over
// 10 and 60 s, in percent. The end of a cgroup's memory shows here first: reclaim stalls the tasks
// before the OOM killer is called.
struct memory_pressure {
    double some_avg10 = 0, some_avg60 = 0, full_avg10 = 0, full_avg60 = 0;
};

// The file's "some avg10=0.00 avg60=0.00 avg300=0.00 total=0" and "full …" lines; nothing when
// either is missing or malformed.
std::optional<memory_pressure> parse_pressure(std::string_view text);

}  // namespace memory
}  // namespace heapd
