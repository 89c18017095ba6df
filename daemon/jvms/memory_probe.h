#pragma once
// Reads a running JVM's memory breakdown (formats/memory/jvm_memory.h) without stopping it: smaps
// and each thread's stack pointer from /proc, the heap from hsperfdata, the limit from its memory
// cgroup, and, through attach where the JVM answers, where its heap and code cache lie, its
// metaspace, and Native Memory Tracking's summary when it runs with it.
#include <sys/types.h>

#include <chrono>

#include "base/error.h"
#include "formats/memory/jvm_memory.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {

// How far the probe may go.
struct memory_probe_options {
    bool attach = true;  // ask the JVM (GC.heap_info, Compiler.codecache, VM.native_memory); else /proc only
    std::chrono::milliseconds attach_timeout{5000};  // per command
};

// A JVM's resident memory and its limit, read cheaply enough for every listing and poll (the
// kernel's counters in /proc/PID/status, the cgroup's files): no smaps, no attach.
struct memory_glance {
    std::int64_t resident = 0;  // VmRSS
    memory_limit limit;
};
// Nothing when the process is gone.
std::optional<memory_glance> glance_memory(pid_t pid);
// {"resident", "limit", "by_cgroup", "percent"}: the glance as the jvms listing carries it.
wire::json to_json(const memory_glance& g);

// At most this much of /proc/PID/smaps is read (about 1 KiB a mapping; 20,000 threads make 45,000).
inline constexpr std::size_t max_smaps_bytes = 96u << 20;

// The breakdown of the JVM with host pid `pid`. What could not be read is a note of the breakdown;
// errors only when the process is gone (no_such_process) or its smaps cannot be read (io,
// permission_denied, bad_value).
result<memory_breakdown> probe_memory(pid_t pid, const memory_probe_options& options = {});

}  // namespace heapd::daemon
