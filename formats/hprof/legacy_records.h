#pragma once
// Decoders for the old hprof agent's profiling records: ALLOC_SITES, CPU_SAMPLES, HEAP_SUMMARY,
// CONTROL_SETTINGS.
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"
#include "formats/hprof/hprof_reader.h"
#include "formats/hprof/record_index.h"

namespace heapd {
inline namespace hprof {

// One allocation site of an ALLOC_SITES record, with its class name resolved.
struct alloc_site {
    std::string class_name;
    std::uint8_t array_type = 0;  // 0 for plain objects, else the element basic type
    std::uint32_t trace_serial = 0;
    std::uint32_t live_bytes = 0, live_instances = 0, allocated_bytes = 0, allocated_instances = 0;
};

// An ALLOC_SITES record (the agent's "SITES BEGIN" table).
struct alloc_sites_table {
    std::uint16_t flags = 0;  // bit 0: incremental, 1: sorted by allocation, 2: force GC
    float cutoff_ratio = 0;
    std::uint32_t total_live_bytes = 0, total_live_instances = 0;
    std::uint64_t total_allocated_bytes = 0, total_allocated_instances = 0;
    std::vector<alloc_site> sites;
};

// A CPU_SAMPLES record: samples per stack trace.
struct cpu_samples_table {
    std::uint32_t total_samples = 0;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> traces;  // (samples, trace serial)
};

// A HEAP_SUMMARY record.
struct heap_summary_info {
    std::uint32_t live_bytes = 0, live_instances = 0;
    std::uint64_t allocated_bytes = 0, allocated_instances = 0;
};

// A CONTROL_SETTINGS record.
struct control_settings_info {
    std::uint32_t flags = 0;  // bit 0: allocation traces on, bit 1: CPU sampling on
    std::uint16_t stack_depth = 0;
};

result<alloc_sites_table> decode_alloc_sites(const hprof_record& rec, const record_index& idx);
result<cpu_samples_table> decode_cpu_samples(const hprof_record& rec);
result<heap_summary_info> decode_heap_summary(const hprof_record& rec);
result<control_settings_info> decode_control_settings(const hprof_record& rec);

}  // namespace hprof
}  // namespace heapd
