#pragma once
// The dominator tree cut to what a picture can show (the HTML report's sunburst): the objects that
// retain at least a share of the reachable heap, biggest first, up to a number of nodes; the rest of
// each shown node's children summed by class (the few classes retaining most; all others together).
//
// Memory: the candidates' queue holds the children above the share of the nodes taken (at most
// 1/min_share per node taken, as siblings retain disjoint bytes), 16 bytes each; the nodes taken, a
// hash entry of about 32 bytes and a tree_node each.
#include <cstddef>
#include <vector>

#include "analysis/dominator_tree.h"
#include "analysis/object_graph.h"
#include "formats/hprof/class_table.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace analysis {

// How much of the tree a picture shows.
struct outline_options {
    double min_share = 0.001;        // of the reachable bytes: smaller objects are summed into "others"
    std::size_t max_nodes = 4000;    // objects shown at most; the others nodes come on top
    std::size_t others_classes = 4;  // per parent, the classes whose small objects get a node of their own
};

// The nodes to draw, parents before children: objects taken biggest retained size first while they
// retain at least min_share of the reachable bytes and there is room; after each shown node's (and
// the heap's) shown children, nodes standing for the rest of its children: one per class for the
// others_classes classes retaining most, one for the remaining classes (class_name "").
template <typename Node>
std::vector<tree_node> outline_dominator_tree(const basic_object_graph<Node>& g, const basic_dominator_tree<Node>& d,
                                              const typename basic_dominator_tree<Node>::children_index& children,
                                              const class_table& classes, const outline_options& options);

}  // namespace analysis
}  // namespace heapd
