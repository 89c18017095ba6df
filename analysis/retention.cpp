#include "analysis/retention.h"

#include <algorithm>

#include "analysis/path_description.h"

namespace heapd {
inline namespace analysis {
namespace {

template <typename Node>
std::vector<dominator_entry> top_retainers(const basic_object_graph<Node>& g, const basic_dominator_tree<Node>& d,
                                           const class_table& classes, unsigned top) {
    std::vector<Node> best;  // min-heap on retained size
    auto smaller = [&](Node a, Node b) {
        return d.retained(a) != d.retained(b) ? d.retained(a) > d.retained(b) : a < b;
    };
    for (Node v = 0; v < g.size() && top > 0; ++v) {
        if (!d.reachable(v)) continue;
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
        out.push_back({g.id(v), node_name(g, classes, v), g.shallow_size(v), d.retained(v)});
    }
    return out;
}

template <typename Node>
std::vector<retained_class_entry> retained_by_class(
    const basic_object_graph<Node>& g, const basic_dominator_tree<Node>& d,
    const typename basic_dominator_tree<Node>::children_index& children) {
    std::vector<std::uint64_t> bytes(g.key_count(), 0);
    std::vector<std::uint32_t> active(g.key_count(), 0);
    struct frame {
        Node node;
        std::uint64_t next;
    };
    std::vector<frame> stack;
    const std::size_t top_slot = g.size();  // the virtual root's children
    for (std::uint64_t i = children.begin[top_slot]; i < children.begin[top_slot + 1]; ++i) {
        stack.push_back({children.nodes[i], children.begin[children.nodes[i]]});
        std::uint32_t k = g.class_key(children.nodes[i]);
        if (active[k]++ == 0) bytes[k] += d.retained(children.nodes[i]);
        while (!stack.empty()) {
            frame& f = stack.back();
            if (f.next == children.begin[f.node + 1]) {
                --active[g.class_key(f.node)];
                stack.pop_back();
                continue;
            }
            Node c = children.nodes[f.next++];
            std::uint32_t ck = g.class_key(c);
            if (active[ck]++ == 0) bytes[ck] += d.retained(c);
            stack.push_back({c, children.begin[c]});
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
                                     const class_table& classes, unsigned top, unsigned class_rows) {
    retention_report r;
    r.computed = true;
    r.reachable_objects = d.reachable_count();
    r.reachable_bytes = d.reachable_bytes();
    r.unreachable_objects = d.unreachable_count();
    r.unreachable_bytes = d.unreachable_bytes();
    r.dominators = top_retainers(g, d, classes, top);
    r.retained_by_class = retained_by_class(g, d, children);
    if (class_rows != 0 && r.retained_by_class.size() > class_rows) r.retained_by_class.resize(class_rows);
    return r;
}

template retention_report summarize_retention(const object_graph&, const dominator_tree&,
                                              const dominator_tree::children_index&, const class_table&, unsigned,
                                              unsigned);
template retention_report summarize_retention(const wide_object_graph&, const wide_dominator_tree&,
                                              const wide_dominator_tree::children_index&, const class_table&, unsigned,
                                              unsigned);

}  // namespace analysis
}  // namespace heapd
