#pragma once
// Leak suspects: objects, or the instances of one class, that retain a large share of the
// reachable heap; for each, where the memory accumulates, what accumulates there, and the
// shortest path from a GC root to it.
//
// Memory: 2 bytes per node and 20 bytes per class, besides the graph, the dominator tree, its
// children index and the root paths it is given. Time: one walk of the dominator tree per class
// suspect (at most max_suspects + 1) and a path per suspect.
#include <vector>

#include "analysis/dominator_tree.h"
#include "analysis/heap_focus.h"
#include "analysis/object_graph.h"
#include "analysis/root_paths.h"
#include "formats/hprof/class_table.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace analysis {

// How suspects are chosen.
struct suspect_options {
    double threshold = 0.10;  // share of the reachable bytes a suspect retains at least
    double most = 0.80;       // a child "keeps most" of its parent above this share
    unsigned max_suspects = 10;
    unsigned max_groups = 5;  // classes listed per accumulation point
    // Android: only this heap's objects are suspects, sizes and shares are of this heap's bytes.
    const heap_focus* focus = nullptr;
};

// Suspects by retained bytes, descending. An object suspect is the highest object retaining the
// threshold, except that a class object (a holder of statics) gives way to each of its big
// children; its accumulation point is found by descending while one child keeps most of the
// size, stopping at the head of a chain of one class. A class suspect is a class whose instances
// together retain the threshold outside every object suspect.
template <typename Node>
std::vector<leak_suspect> find_leak_suspects(const basic_object_graph<Node>& g, const basic_dominator_tree<Node>& d,
                                             const typename basic_dominator_tree<Node>::children_index& children,
                                             const class_table& classes, const basic_root_paths<Node>& paths,
                                             const suspect_options& options = {});

}  // namespace analysis
}  // namespace heapd
