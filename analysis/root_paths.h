#pragma once
// Shortest strong paths from GC roots to objects: one breadth-first search forward from all roots
// gives a path to every reachable object; a search backwards from one object finds the shortest
// path from each of several different roots.
//
// Memory, for 32-bit nodes: root_paths keeps 4 bytes per node (plus 4 per node for the queue
// while searching); paths_from_roots needs, while it runs, 12 bytes per node and 4 per reference
// (predecessors). With 64-bit nodes, 8 for each of those 4.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "analysis/object_graph.h"
#include "base/big_memory.h"

namespace heapd {
inline namespace analysis {

// Every reachable node's parent on one shortest path from a GC root (ties go to the lower root
// and the earlier reference, so the result is deterministic). Lasting roots come first: a node
// that a class, a JNI global or a thread object reaches gets its path from one of those, however
// short a path from a stack frame (java_frame, native_stack, jni_local, thread_block) would be.
template <typename Node>
class basic_root_paths {
public:
    static basic_root_paths compute(const basic_object_graph<Node>& g);
    basic_root_paths() = default;

    bool reachable(Node node) const { return parent_[node] != basic_object_graph<Node>::no_node; }
    // The path root first, node last; empty when the node is unreachable.
    std::vector<Node> path_to(Node node) const;

private:
    big_vector<Node> parent_;  // no_node: unreached; a root is its own parent
};

using root_paths = basic_root_paths<std::uint32_t>;
using wide_root_paths = basic_root_paths<std::uint64_t>;
extern template class basic_root_paths<std::uint32_t>;
extern template class basic_root_paths<std::uint64_t>;

// Up to max_paths shortest paths to target, each from a different GC root, shortest first (root
// first, target last). Empty when no root reaches it.
template <typename Node>
std::vector<std::vector<Node>> paths_from_roots(const basic_object_graph<Node>& g, std::type_identity_t<Node> target,
                                                unsigned max_paths);

}  // namespace analysis
}  // namespace heapd
