#pragma once
// The dump's threads: names, states and Java stack traces, from thread roots, traces and frames.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "formats/hprof/class_table.h"
#include "formats/hprof/heap_records.h"
#include "formats/hprof/object_locator.h"
#include "formats/hprof/record_index.h"

namespace heapd {
inline namespace analysis {

// One Java thread as the dump shows it.
struct thread_entry {
    std::uint32_t serial = 0;
    std::uint64_t object_id = 0;
    std::string name;   // decoded Thread.name, or the START_THREAD name
    std::string state;  // java.lang.Thread.State name, "" when unknown
    std::optional<bool> daemon;
    std::vector<std::string> frames;  // "java.lang.Object.wait(Object.java:338)", innermost first
};

// A Java stack frame in the form a Java stack trace prints it.
std::string format_frame(const record_index& idx, const frame_info& f);
// The java.lang.Thread.State name for a JVMTI thread status word.
std::string thread_state_name(std::uint32_t status);

// Strings that other analyses want read along with the thread names, in the same walks: ids in,
// contents out ("" for those not found or not Strings).
struct strings_along {
    std::vector<std::uint64_t> ids;
    std::vector<std::string> text;
};

// Threads from ROOT_THREAD_OBJ roots (HotSpot) and START_THREAD records (the old hprof agent),
// by serial; names and states are read from the Thread objects (a few passes over the heap). In a
// dump whose strings are stripped (zeros only) the Thread objects' names are not read: such threads
// are named "<thread SERIAL, name stripped>". along, when given, is filled too.
std::vector<thread_entry> collect_threads(const record_index& idx, const class_table& classes,
                                          const std::vector<root_view>& thread_roots, bool strings_stripped = false,
                                          strings_along* along = nullptr, const record_finder& finder = {});

}  // namespace analysis
}  // namespace heapd
