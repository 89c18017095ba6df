#pragma once
// Where a JVM's memory goes: the resident memory of the process against the limit that applies to
// it (its memory cgroup's, else the host's), split into the Java heap, metaspace, the code cache,
// thread stacks, mapped files and the native memory left (malloc arenas with direct buffers, GC
// structures), from what can be read without stopping the JVM: smaps, the JVM's own diagnostic
// commands where they answer, and Native Memory Tracking's summary where it is on.
//
// Each part says how it was measured. Resident bytes are what the kernel charges to the process and
// its cgroup (what an OOM kill is decided on); committed bytes are what the JVM set aside (the heap
// it committed, say), of which only the touched pages are resident.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "formats/memory/cgroup_files.h"
#include "formats/memory/jcmd_figures.h"
#include "formats/memory/smaps.h"

namespace heapd {
inline namespace memory {

// What a breakdown is built from, each as read (nothing: could not be read).
struct memory_inputs {
    std::vector<mapping> mappings;               // /proc/PID/smaps
    std::vector<std::uint64_t> stack_pointers;   // of the threads blocked (/proc/PID/task/*/syscall)
    std::int64_t threads = 0;                    // tasks of the process
    std::optional<heap_info_figures> heap_info;  // GC.heap_info (and VM.metaspace's head)
    std::vector<address_range> code_heaps;       // Compiler.codecache
    std::optional<std::int64_t> heap_committed, heap_used, heap_max;  // hsperfdata's generations
    std::optional<nmt_summary> nmt;                                   // VM.native_memory summary
};

// One part of the JVM's memory; figures in bytes, nothing where unknown.
struct memory_part {
    std::string name;  // java_heap, metaspace, code_cache, thread_stacks, mapped_files, other_native, swap
    std::optional<std::int64_t> resident, committed, used;
    std::optional<std::int64_t> count;  // threads (thread_stacks)
    std::string source;                 // how the figures were measured
};

// The limit the process's memory is held to and what its cgroup reports.
struct memory_limit {
    std::optional<std::int64_t> bytes;  // the tightest limit (the cgroup's or an ancestor's), else the host's memory
    std::string source;                 // "cgroup v1 /a/b", "cgroup v2 /a (an ancestor of /a/b)", "host memory"
    bool by_cgroup = false;             // bytes is a cgroup's limit (else the host's memory)
    int cgroup_version = 0;             // 1 or 2 when a memory cgroup was read
    std::optional<std::int64_t> cgroup_usage;      // everything charged to the cgroup (page cache, other processes)
    std::optional<std::int64_t> cgroup_anonymous;  // of it, memory no file backs (memory.stat anon, v1 total_rss)
    std::optional<std::int64_t> oom_kills;         // processes the kernel's OOM killer ended in the cgroup
    std::optional<std::int64_t> swap_limit;        // memory.swap.max / memsw (v1: memory and swap together)
    std::optional<memory_pressure> pressure;       // the cgroup's (v2), else the host's
    std::string pressure_source;                   // "cgroup v2 /a/b", "the host's, /proc/pressure/memory"
};

// A JVM's memory at one moment.
struct memory_breakdown {
    pid_t pid = 0;
    std::int64_t resident = 0, anonymous = 0, file_resident = 0, swap = 0;
    std::int64_t at_ms = 0;  // when it was read (ms since the epoch)
    memory_limit limit;
    std::vector<memory_part> parts;  // in the order of memory_part::name's list
    std::optional<nmt_summary> nmt;
    std::vector<std::string> notes;  // what could not be read, and why

    // The part of that name, or nullptr.
    const memory_part* part(std::string_view name) const;
    // resident / limit in percent, nothing without a limit.
    std::optional<double> percent_of_limit() const;
};

// Builds the parts from the inputs (pid, limit, at_ms and notes are the caller's).
memory_breakdown break_down(const memory_inputs& in);

}  // namespace memory
}  // namespace heapd
