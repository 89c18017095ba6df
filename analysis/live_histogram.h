#pragma once
// The histogram of what is live: per class, the instances and bytes a chain of strong references
// from a GC root reaches (Eclipse MAT's histogram, which discards the rest). Memory: 16 bytes per
// class while counting.
#include <vector>

#include "analysis/dominator_tree.h"
#include "analysis/object_graph.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace analysis {

// Fills reachable_instances and reachable_bytes of each histogram row from the dominator tree's
// reachability; rows are matched to the graph's class keys by class id (primitive arrays by name).
template <typename Node>
void count_reachable(const basic_object_graph<Node>& g, const basic_dominator_tree<Node>& d,
                     std::vector<histogram_entry>& histogram);

}  // namespace analysis
}  // namespace heapd
