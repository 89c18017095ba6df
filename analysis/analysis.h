#pragma once
// `heapd analyze`: the reader and the first analyses put together into one report.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "analysis/dominator_outline.h"
#include "base/error.h"
#include "formats/hprof/record_index.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace analysis {

// What to analyze and how much to keep.
struct analysis_options {
    unsigned top = 20;                  // histogram rows kept in the report (0: all)
    unsigned largest = 20;              // largest objects kept, and the top retainers and classes by retained size
    bool all_retained_classes = false;  // keep every class's retained size, not only the largest (for diffs)
    bool threads = true;                // resolve thread names and states (three extra walks without the graph)
    bool retained = true;               // build the object graph and dominator tree (see object_graph.h for memory)
    double suspect_threshold = 0.10;    // leak suspects retain at least this share of the reachable heap
    outline_options tree;               // the dominator tree kept for pictures (max_nodes 0: none)
    bool waste = true;                  // the waste report: one more walk over the heap (see waste.h)
    // With the object graph, the waste report's walk runs on a second thread beside the dominator
    // tree when the big arrays' budget has room for both (analysis.cpp); false: never (they run
    // between the threads and the dominators either way).
    bool waste_beside_dominators = true;
    // Threads that work at once: 0 one per core (at most 4), 1 all on the calling thread. The
    // report is the same, byte for byte, whatever the number.
    unsigned workers = 0;
    unsigned dump = 0;  // which heap dump of a file holding several: 1 the first, 0 the last
    // Android: the heap suspects and retainers speak of ("" the app's when there is one, "all" every
    // heap, or a heap's name: "zygote", "image"); see heap_focus.h.
    std::string heap;
    // Heaps of fewer objects than this get 32-bit node numbers, others 64-bit (see object_graph.h);
    // a test lowers it to take the 64-bit path on a small heap.
    std::uint64_t narrow_nodes_below = ~std::uint32_t{0};
    std::string file_name;  // shown in the report
    // Called once the analysis has read all it reads in bulk from the dump (before the dominator
    // tree): the owner of a mapping may drop its resident pages (mapped_file::release_resident).
    std::function<void()> bulk_reads_done;
    // Called as each phase starts, with its name (analysis_phases lists them in order); returning
    // false stops the analysis, which then fails with error_code::cancelled.
    std::function<bool(std::string_view phase)> phase_started;
    // Called now and then within the object graph and dominators phases, with how much of the
    // phase is done (0 to 1).
    std::function<void(double done)> phase_progress;
};

// The phases of a full analysis in the order they start; phases that options turn off are skipped.
// Without the object graph (options.retained false), threads come before the waste report. The
// waste report may run on beside the dominators (waste_beside_dominators).
inline constexpr std::string_view analysis_phases[] = {"index", "census",     "object graph", "threads",
                                                       "waste", "dominators", "suspects"};

// Analyses an HPROF image held in memory. Fails only when the header is unusable; damage further
// on becomes problems in the report, which holds everything read before it.
// Fails with not_found when the index was asked for a heap dump (1 for the first) the file lacks.
result<void> check_dump_number(const record_index& idx, unsigned dump);

result<analysis_report> analyze_dump(std::span<const std::byte> data, const analysis_options& options);

}  // namespace analysis
}  // namespace heapd
