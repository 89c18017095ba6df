#pragma once
// Who keeps what alive: the dominator tree of the object graph (a virtual root above all GC
// roots) and every object's retained size, by the Semi-NCA algorithm without recursion.
//
// Memory, for 32-bit nodes: kept, 12 bytes per node (immediate dominator 4, retained size 8);
// while computing, a further 24 bytes per reachable node and 4 bytes per reference at the peak
// (preorder-to-node 4, DFS parents 4, semidominators, labels and ancestors 12, predecessor list
// starts 4, or 8 when the graph has 2^32 references or more). children() adds 8 bytes per node.
// With 64-bit nodes (wide_object_graph) each of these 4-byte entries takes 8.
#include <cstdint>
#include <limits>
#include <vector>

#include "analysis/object_graph.h"
#include "base/big_memory.h"
#include "base/error.h"

namespace heapd {
inline namespace analysis {

// Immediate dominators and retained sizes of a graph's nodes.
template <typename Node>
class basic_dominator_tree {
public:
    using graph = basic_object_graph<Node>;
    static constexpr Node virtual_root = graph::no_node - 1;  // above all GC roots
    static constexpr Node unreachable = graph::no_node;

    // The least compute takes beyond the graph, for g's nodes: each one's immediate dominator and
    // retained size (what it keeps; the arrays of the computation come and go before).
    static std::uint64_t least_bytes(const graph& g) {
        return std::uint64_t{g.size()} * (sizeof(Node) + sizeof(std::uint64_t));
    }
    // narrow_edges_below: graphs with fewer references than this keep predecessor offsets in 32
    // bits (a test lowers it to take the 64-bit path on a small graph). progress, when set, is told
    // how far the computation is now and then.
    static basic_dominator_tree compute(const graph& g,
                                        std::uint64_t narrow_edges_below = std::numeric_limits<std::uint32_t>::max(),
                                        const progress_callback& progress = {});

    // The node's immediate dominator: a node, virtual_root, or unreachable.
    Node idom(Node node) const { return idom_[node]; }
    bool reachable(Node node) const { return idom_[node] != unreachable; }
    // Bytes freed if the node became unreachable: itself and everything only it keeps alive.
    std::uint64_t retained(Node node) const { return retained_[node]; }

    std::uint64_t reachable_count() const { return reachable_count_; }
    std::uint64_t reachable_bytes() const { return reachable_bytes_; }
    std::uint64_t unreachable_count() const { return idom_.size() - reachable_count_; }
    std::uint64_t unreachable_bytes() const { return unreachable_bytes_; }

    // Children lists of the dominator tree (the virtual root's children under index size()).
    // 2 Nodes per node: a list start (a Node will do: there are fewer children than nodes), a child.
    struct children_index {
        big_vector<Node> begin;  // size() + 2 entries
        big_vector<Node> nodes;  // each list in ascending node order
    };
    children_index children() const;

private:
    big_vector<Node> idom_;
    big_vector<std::uint64_t> retained_;
    std::uint64_t reachable_count_ = 0, reachable_bytes_ = 0, unreachable_bytes_ = 0;
};

using dominator_tree = basic_dominator_tree<std::uint32_t>;
using wide_dominator_tree = basic_dominator_tree<std::uint64_t>;
extern template class basic_dominator_tree<std::uint32_t>;
extern template class basic_dominator_tree<std::uint64_t>;

}  // namespace analysis
}  // namespace heapd
