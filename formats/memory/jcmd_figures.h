#pragma once
// What a JVM's own diagnostic commands say of its memory, read from their text as JDK 11 to 25
// print it: GC.heap_info (where the heap lies, metaspace and class space), Compiler.codecache (where
// the code heaps lie) and VM.native_memory summary (Native Memory Tracking's categories, when the
// JVM runs with -XX:NativeMemoryTracking).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/memory/smaps.h"

namespace heapd {
inline namespace memory {

// What GC.heap_info tells: the heap's reserved range (every "[0x..., 0x...)" of the collector's
// lines; ZGC prints none) and its metaspace lines ("Metaspace used 133K, committed 320K, reserved
// 1114112K", " class space used 4K, committed 128K, reserved 1048576K"), which JDK 21 and later
// print at the head of VM.metaspace instead: the same parser reads both.
struct heap_info_figures {
    std::optional<address_range> heap;
    std::optional<std::int64_t> heap_used;  // "used 1439K" of the lines that give a "total": the generations'
    std::optional<std::int64_t> metaspace_used, metaspace_committed, metaspace_reserved;
    std::optional<std::int64_t> class_space_used, class_space_committed;
};
heap_info_figures parse_heap_info(std::string_view text);

// The code heaps' ranges in Compiler.codecache ("bounds [low, high-water, high]"; JDK 8's single
// "CodeCache: size=..." is followed by the same line).
std::vector<address_range> parse_code_heaps(std::string_view text);

// One category of Native Memory Tracking's summary, in bytes.
struct nmt_category {
    std::string name;  // "Java Heap", "Class", "Thread", "Code", "GC", "Other", ...
    std::int64_t reserved = 0, committed = 0;
};
// Native Memory Tracking's summary: its total and categories, and the figures inside them that a
// breakdown compares with its own.
struct nmt_summary {
    std::int64_t reserved = 0, committed = 0;
    std::vector<nmt_category> categories;
    std::optional<std::int64_t> threads;                // "(thread #39)"
    std::optional<std::int64_t> stack_committed;        // "(stack: reserved=..., committed=...)"
    std::optional<std::int64_t> metadata_committed;     // Class's "Metadata: reserved=, committed="
    std::optional<std::int64_t> class_space_committed;  // Class's "Class space: reserved=, committed="
    // The category of that name, or nullptr.
    const nmt_category* find(std::string_view name) const;
};
// Nothing when the text is no summary (Native Memory Tracking off: "Native memory tracking is not
// enabled").
std::optional<nmt_summary> parse_nmt_summary(std::string_view text);

}  // namespace memory
}  // namespace heapd
