#pragma once
// What in the heap stands for memory outside it: direct buffers (native memory), threads (their
// stacks) and class loaders (metaspace), and the paths that hold each kind, grouped by shape.
//
// Memory: a bit per node (the Thread objects) and a few words per direct buffer, class loader and
// class, besides the graph, the dominator tree and the root paths it is given. Time: one pass over
// the nodes for the buffers, one over every reference when there are threads, and a root path per
// buffer, loader and held thread.
#include <vector>

#include "analysis/dominator_tree.h"
#include "analysis/object_graph.h"
#include "analysis/root_paths.h"
#include "formats/hprof/class_table.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace analysis {

// The off-heap report: group_threads (thread_groups.h) of threads, then the direct buffers, the
// class loaders and the holders of the threads' objects, at most max_groups of each list.
template <typename Node>
off_heap_report find_off_heap(const basic_object_graph<Node>& g, const basic_dominator_tree<Node>& d,
                              const class_table& classes, const basic_root_paths<Node>& paths,
                              const std::vector<thread_report>& threads, unsigned max_groups = 5);

}  // namespace analysis
}  // namespace heapd
