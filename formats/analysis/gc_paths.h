#pragma once
// Shortest strong paths from GC roots to objects: one breadth-first search forward from all roots
// gives a path to every reachable object; a search backwards from one object finds the shortest
// path from each of several different roots.
//
// Memory: root_paths keeps 4 bytes per node (plus 4 per node for the queue while searching);
// paths_from_roots needs, while it runs, 12 bytes per node and 4 per reference (predecessors).
#include <cstdint>
#include <vector>

#include "base/big_memory.h"
#include "formats/analysis/object_graph.h"

namespace heapd {

// Every reachable node's parent on one shortest path from a GC root (ties go to the lower root
// and the earlier reference, so the result is deterministic). Lasting roots come first: a node
// that a class, a JNI global or a thread object reaches gets its path from one of those, however
// short a path from a stack frame (java_frame, native_stack, jni_local, thread_block) would be.
class root_paths {
public:
    static root_paths compute(const object_graph& g);
    root_paths() = default;

    bool reachable(std::uint32_t node) const { return parent_[node] != object_graph::no_node; }
    // The path root first, node last; empty when the node is unreachable.
    std::vector<std::uint32_t> path_to(std::uint32_t node) const;

private:
    big_vector<std::uint32_t> parent_;  // no_node: unreached; a root is its own parent
};

// Up to max_paths shortest paths to target, each from a different GC root, shortest first (root
// first, target last). Empty when no root reaches it.
std::vector<std::vector<std::uint32_t>> paths_from_roots(const object_graph& g, std::uint32_t target,
                                                         unsigned max_paths);

}  // namespace heapd
