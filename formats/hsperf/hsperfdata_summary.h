#pragma once
// What a JVM's hsperfdata says about it, as plain data: command, version, flags, heap per
// generation and space, GC counts and times, and its out-of-memory settings.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/hsperf/hsperfdata.h"

namespace heapd {
inline namespace hsperf {

// One space of a generation (sun.gc.generation.N.space.M: eden, s0, s1, old), in bytes.
struct hsperf_space {
    int index = 0;
    std::string name;
    std::int64_t used = 0, capacity = 0, max_capacity = 0;
};

// One generation (sun.gc.generation.N: young/new, old), its sizes and its spaces.
struct hsperf_generation {
    int index = 0;
    std::string name;
    std::int64_t capacity = 0, max_capacity = 0;
    std::vector<hsperf_space> spaces;
    // The sum of its spaces' used bytes (generations have no counter of their own).
    std::int64_t used() const;
};

// One collector (sun.gc.collector.N): how often it ran and for how long.
struct hsperf_collector {
    int index = 0;
    std::string name;  // "G1 young collection pauses"
    std::int64_t invocations = 0;
    std::int64_t ticks = 0;  // time in sun.os.hrt.ticks
    double seconds = 0;      // ticks / sun.os.hrt.frequency
};

// Used, committed and maximum bytes of the heap or of a part of it.
struct hsperf_heap_usage {
    std::int64_t used = 0, capacity = 0, max_capacity = 0;
    // used / max_capacity (used / capacity when no maximum is known), nothing when both are 0.
    std::optional<double> occupancy() const;
};

// The JVM's out-of-memory settings as its arguments give them.
struct oom_settings {
    bool heap_dump = false;      // -XX:+HeapDumpOnOutOfMemoryError
    std::string heap_dump_path;  // -XX:HeapDumpPath=
    std::string on_error;        // -XX:OnOutOfMemoryError= (several joined with "; ")
    bool exit = false;           // -XX:+ExitOnOutOfMemoryError
    bool crash = false;          // -XX:+CrashOnOutOfMemoryError
    bool any() const { return heap_dump || !on_error.empty() || exit || crash; }
};

// The most bytes of each text a summary keeps (cut at a UTF-8 character): HotSpot itself cuts its
// string counters at PerfMaxStringConstLength, 1024 by default, so a real JVM's fit; a file its
// owner wrote by hand cannot make a summary, or anything that keeps one, big.
inline constexpr std::size_t max_summary_text = 4096;

// The typed summary of one hsperfdata snapshot; strings are copies, so it outlives the file.
// Every text is at most max_summary_text bytes.
struct jvm_perf_summary {
    bool accessible = false;  // the JVM had finished creating its counters
    bool complete = true;     // no entry was being added as the file was read
    std::string command;      // sun.rt.javaCommand: main class (or jar) and its arguments
    std::string main_class;   // the command's first word, as `jps -l` prints it
    std::string vm_version;   // java.vm.version
    std::string vm_flags;     // java.rt.vmFlags: the flags file's settings
    std::string vm_args;      // java.rt.vmArgs: the JVM's arguments
    std::string gc_policy;    // sun.gc.policy.name: "GarbageFirst", "ParScav:MSC", "Copy:MSC"
    std::string last_cause;   // sun.gc.lastCause: "G1 Evacuation Pause", "No GC"
    std::vector<hsperf_generation> generations;
    std::vector<hsperf_collector> collectors;
    hsperf_heap_usage heap;                    // all generations
    std::optional<hsperf_heap_usage> old_gen;  // generation 1 (the whole heap for ZGC and Shenandoah)
    std::int64_t hrt_frequency = 0;            // ticks per second
    std::int64_t hrt_ticks = 0;                // ticks since the JVM started, sampled by the JVM
    std::int64_t create_vm_begin_ms = 0;       // sun.rt.createVmBeginTime, ms since the epoch
    std::int64_t gc_ticks = 0;                 // all collectors' time
    double gc_seconds = 0;
    double uptime_seconds = 0;
    std::optional<double> gc_time_share;  // gc_ticks / hrt_ticks
    oom_settings oom;
};

// Reads the counters above from a snapshot; absent counters leave their defaults.
jvm_perf_summary summarize(const hsperf_snapshot& snapshot, bool accessible);
// The summary of the file as it is now.
result<jvm_perf_summary> summarize(const hsperf_data& data);

// The out-of-memory settings of a JVM from java.rt.vmFlags (the flags file, read first) and
// java.rt.vmArgs (the arguments, later ones win). vmArgs joins the arguments with spaces, so a
// value runs up to the next argument that starts like a JVM option (" -X", " -D", " --", ...).
oom_settings parse_oom_settings(std::string_view vm_flags, std::string_view vm_args);

}  // namespace hsperf
}  // namespace heapd
