#pragma once
// Which objects the suspects and retainers of an Android dump speak of: those of one heap, the
// app's by default, as Android Studio's profiler and LeakCanary look at an app. The image and
// zygote heaps' objects, preloaded and shared by every app, are given: never suspects, and their
// bytes not counted in what an object retains. Memory: 9 bytes per node (none for other dumps).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/census.h"
#include "analysis/dominator_tree.h"
#include "analysis/object_graph.h"

namespace heapd {
inline namespace analysis {

// The objects of one heap, and what each object keeps alive of that heap.
struct heap_focus {
    std::vector<std::uint8_t> outside;    // per node: 1 when the object is in another heap
    std::vector<std::uint64_t> retained;  // per node: bytes of the heap's objects only it keeps alive
    std::uint64_t reachable_bytes = 0;    // bytes of the heap's reachable objects
    bool active() const { return !outside.empty(); }
};

// The heap to focus on: the one named `wanted` when the dump has it; "" means "app"; "all" none.
std::optional<unsigned> focus_heap(const census_result& c, const std::string& wanted);

// The focus on heap `heap` (an index into c.heaps) of a graph built from c's dump.
template <typename Node>
heap_focus make_heap_focus(const basic_object_graph<Node>& g,
                           const typename basic_dominator_tree<Node>::children_index& children, const census_result& c,
                           unsigned heap);

}  // namespace analysis
}  // namespace heapd
