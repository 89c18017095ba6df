#include "analysis/retention.h"

#include <algorithm>

#include "analysis/path_description.h"

namespace heapd {
inline namespace analysis {
namespace {

// What v keeps alive (of the focus heap, when there is one), and whether v is another heap's.
template <typename Node>
struct retained_view {
    const basic_dominator_tree<Node>& d;
    const heap_focus* focus;
    std::uint64_t operator()(Node v) const { return focus ? focus->retained[v] : d.retained(v); }
    bool given(Node v) const { return focus != nullptr && focus->outside[v] != 0; }
};

template <typename Node>
std::vector<dominator_entry> top_retainers(const basic_object_graph<Node>& g, const basic_dominator_tree<Node>& d,
                                           const class_table& classes, unsigned top,
                                           const retained_view<Node>& retained) {
    std::vector<Node> best;  // min-heap on retained size
    auto smaller = [&](Node a, Node b) { return retained(a) != retained(b) ? retained(a) > retained(b) : a < b; };
    for (Node v = 0; v < g.size() && top > 0; ++v) {
        if (!d.reachable(v) || retained.given(v)) continue;
        if (best.size() < top) {
            best.push_back(v);
            std::push_heap(best.begin(), best.end(), smaller);
        } else if (smaller(v, best.front())) {
            std::pop_heap(best.begin(), best.end(), smaller);
            best.back() = v;
            std::push_heap(best.begin(), best.end(), smaller);
        }
    }
    std::sort(best.begin(), best.end(), smaller);
    std::vector<dominator_entry> out;
    for (Node v : best) {
        out.push_back({g.id(v), node_name(g, classes, v), g.shallow_size(v), retained(v)});
    }
    return out;
}

template <typename Node>
std::vector<retained_class_entry> retained_by_class(const basic_object_graph<Node>& g,
                                                    const typename basic_dominator_tree<Node>::children_index& children,
                                                    const retained_view<Node>& retained) {
    std::vector<std::uint64_t> bytes(g.key_count(), 0);
    std::vector<std::uint32_t> active(g.key_count(), 0);
    struct frame {
        Node node;
        std::uint64_t next;
        bool counted;  // of the focus heap (every object when there is none)
    };
    std::vector<frame> stack;
    auto enter = [&](Node v) {
        const bool counted = !retained.given(v);
        std::uint32_t k = g.class_key(v);
        if (counted && active[k]++ == 0) bytes[k] += retained(v);
        stack.push_back({v, children.begin[v], counted});
    };
    const std::size_t top_slot = g.size();  // the virtual root's children
    for (std::uint64_t i = children.begin[top_slot]; i < children.begin[top_slot + 1]; ++i) {
        enter(children.nodes[i]);
        while (!stack.empty()) {
            frame& f = stack.back();
            if (f.next == children.begin[f.node + 1]) {
                if (f.counted) --active[g.class_key(f.node)];
                stack.pop_back();
                continue;
            }
            enter(children.nodes[f.next++]);
        }
    }
    std::vector<retained_class_entry> out;
    for (std::uint32_t k = 0; k < g.key_count(); ++k)
        if (bytes[k] > 0) out.push_back({g.key_name(k), bytes[k]});
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return a.retained_bytes != b.retained_bytes ? a.retained_bytes > b.retained_bytes : a.class_name < b.class_name;
    });
    return out;
}

}  // namespace

template <typename Node>
retention_report summarize_retention(const basic_object_graph<Node>& g, const basic_dominator_tree<Node>& d,
                                     const typename basic_dominator_tree<Node>::children_index& children,
                                     const class_table& classes, unsigned top, unsigned class_rows,
                                     const heap_focus* focus) {
    retention_report r;
    r.computed = true;
    r.reachable_objects = d.reachable_count();
    r.reachable_bytes = d.reachable_bytes();
    r.unreachable_objects = d.unreachable_count();
    r.unreachable_bytes = d.unreachable_bytes();
    const retained_view<Node> retained{d, focus};
    r.dominators = top_retainers(g, d, classes, top, retained);
    r.retained_by_class = retained_by_class<Node>(g, children, retained);
    if (class_rows != 0 && r.retained_by_class.size() > class_rows) r.retained_by_class.resize(class_rows);
    return r;
}

template retention_report summarize_retention(const object_graph&, const dominator_tree&,
                                              const dominator_tree::children_index&, const class_table&, unsigned,
                                              unsigned, const heap_focus*);
template retention_report summarize_retention(const wide_object_graph&, const wide_dominator_tree&,
                                              const wide_dominator_tree::children_index&, const class_table&, unsigned,
                                              unsigned, const heap_focus*);

}  // namespace analysis
}  // namespace heapd
