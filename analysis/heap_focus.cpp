#include "analysis/heap_focus.h"

#include <algorithm>

namespace heapd {
inline namespace analysis {

std::optional<unsigned> focus_heap(const census_result& c, const std::string& wanted) {
    const std::string name = wanted.empty() ? "app" : wanted;
    for (unsigned h = 0; h < c.heaps.size(); ++h)
        if (c.heaps[h].name == name) return h;
    return std::nullopt;
}

template <typename Node>
heap_focus make_heap_focus(const basic_object_graph<Node>& g,
                           const typename basic_dominator_tree<Node>::children_index& children, const census_result& c,
                           unsigned heap) {
    heap_focus f;
    f.outside.assign(g.size(), 0);
    // Each node's heap: the run its record lies in (runs ascend by offset; records before the
    // first run belong to the first heap).
    for (Node v = 0; v < g.size(); ++v) {
        const std::uint64_t at = g.record_offset(v);
        auto run = std::upper_bound(c.heap_runs.begin(), c.heap_runs.end(), at,
                                    [](std::uint64_t offset, const heap_run& r) { return offset < r.offset; });
        const unsigned in = run == c.heap_runs.begin() ? 0 : std::prev(run)->heap;
        f.outside[v] = in != heap;
    }
    // What each node keeps alive of the heap: bottom-up over the dominator tree, without recursion.
    f.retained.assign(g.size(), 0);
    struct frame {
        Node node;
        std::uint64_t next;
    };
    std::vector<frame> stack;
    const std::size_t top = g.size();  // the virtual root's children
    for (std::uint64_t i = children.begin[top]; i < children.begin[top + 1]; ++i) {
        stack.push_back({children.nodes[i], children.begin[children.nodes[i]]});
        while (!stack.empty()) {
            frame& fr = stack.back();
            if (fr.next == children.begin[fr.node + 1]) {
                const Node v = fr.node;
                stack.pop_back();
                if (!f.outside[v]) f.retained[v] += g.shallow_size(v);
                if (!stack.empty())
                    f.retained[stack.back().node] += f.retained[v];
                else
                    f.reachable_bytes += f.retained[v];
                continue;
            }
            const Node child = children.nodes[fr.next++];
            stack.push_back({child, children.begin[child]});
        }
    }
    return f;
}

template heap_focus make_heap_focus<std::uint32_t>(const object_graph&, const dominator_tree::children_index&,
                                                   const census_result&, unsigned);
template heap_focus make_heap_focus<std::uint64_t>(const wide_object_graph&, const wide_dominator_tree::children_index&,
                                                   const census_result&, unsigned);

}  // namespace analysis
}  // namespace heapd
