#include "formats/analysis/dominator_tree.h"

#include <algorithm>

namespace heapd {
namespace {

constexpr std::uint32_t none = ~std::uint32_t{0};

// Depth-first preorder from the virtual root (preorder number 0): vertex[i] is the node numbered i,
// parent[i] the preorder number of its DFS parent; pre[node] is none for unreachable nodes.
struct preorder {
    big_vector<std::uint32_t> pre, vertex, parent;
};

preorder depth_first(const object_graph& g) {
    preorder p;
    p.pre.assign(g.size(), none);
    p.vertex.push_back(dominator_tree::virtual_root);
    p.parent.push_back(0);
    struct frame {
        std::uint32_t node;
        std::uint64_t next;  // index of the next reference to follow
    };
    big_vector<frame> stack;
    auto visit = [&](std::uint32_t node, std::uint32_t parent) {
        p.pre[node] = static_cast<std::uint32_t>(p.vertex.size());
        p.vertex.push_back(node);
        p.parent.push_back(parent);
        stack.push_back({node, 0});
    };
    for (std::uint32_t root : g.roots()) {
        if (p.pre[root] != none) continue;
        visit(root, 0);
        while (!stack.empty()) {
            frame& f = stack.back();
            auto refs = g.references(f.node);
            if (f.next == refs.size()) {
                stack.pop_back();
                continue;
            }
            std::uint32_t w = refs[f.next++];
            if (w != object_graph::no_node && p.pre[w] == none) visit(w, p.pre[f.node]);
        }
    }
    return p;
}

// Predecessor lists in preorder numbers, over reachable nodes only; Offset is std::uint32_t when
// the edges number fewer than 2^32 (4 bytes per node less at the peak), std::uint64_t otherwise.
template <typename Offset>
struct predecessors {
    big_vector<Offset> begin;
    big_vector<std::uint32_t> from;
};

template <typename Offset>
predecessors<Offset> reverse_edges(const object_graph& g, const preorder& p) {
    const std::size_t n = p.vertex.size();
    predecessors<Offset> r;
    r.begin.assign(n + 1, 0);
    auto each_edge = [&](auto&& f) {
        for (std::uint32_t root : g.roots()) f(0, p.pre[root]);
        for (std::size_t i = 1; i < n; ++i)
            for (std::uint32_t w : g.references(p.vertex[i]))
                if (w != object_graph::no_node) f(static_cast<std::uint32_t>(i), p.pre[w]);
    };
    each_edge([&](std::uint32_t, std::uint32_t to) { ++r.begin[to + 1]; });
    for (std::size_t i = 0; i < n; ++i) r.begin[i + 1] += r.begin[i];
    r.from.resize(r.begin[n]);
    // Filled from each list's end down, so that begin[to + 1] ends where begin[to] was: no copy.
    each_edge([&](std::uint32_t from, std::uint32_t to) { r.from[--r.begin[to + 1]] = from; });
    // begin[i + 1] now holds list i's start; shift them back into place.
    for (std::size_t i = 0; i < n; ++i) r.begin[i] = r.begin[i + 1];
    r.begin[n] = static_cast<Offset>(r.from.size());
    return r;
}

// Semi-NCA: semidominators by link-eval with iterative path compression, then each immediate
// dominator as the nearest common ancestor of parent and semidominator. Returns idom by preorder.
template <typename Offset>
big_vector<std::uint32_t> semi_nca(const preorder& p, predecessors<Offset> preds) {
    const std::size_t n = p.vertex.size();
    big_vector<std::uint32_t> semi(n), label(n), ancestor(n, none), path;
    for (std::size_t i = 0; i < n; ++i) semi[i] = label[i] = static_cast<std::uint32_t>(i);
    auto eval = [&](std::uint32_t v) {
        if (ancestor[v] == none) return v;
        for (std::uint32_t x = v; ancestor[ancestor[x]] != none; x = ancestor[x]) path.push_back(x);
        while (!path.empty()) {
            std::uint32_t y = path.back(), a = ancestor[y];
            path.pop_back();
            if (semi[label[a]] < semi[label[y]]) label[y] = label[a];
            ancestor[y] = ancestor[a];
        }
        return label[v];
    };
    for (std::size_t w = n - 1; w >= 1; --w) {
        for (Offset e = preds.begin[w]; e < preds.begin[w + 1]; ++e) {
            std::uint32_t u = eval(preds.from[e]);
            if (semi[u] < semi[w]) semi[w] = semi[u];
        }
        ancestor[w] = p.parent[w];
    }
    // The second step needs neither the predecessors nor the forest: freed, and the labels' room
    // reused for the dominators, so that this step is no peak of its own.
    preds = {};
    big_vector<std::uint32_t>().swap(ancestor);
    big_vector<std::uint32_t> idom = std::move(label);
    std::fill(idom.begin(), idom.end(), 0);
    for (std::size_t w = 1; w < n; ++w) {
        std::uint32_t x = p.parent[w];
        while (x > semi[w]) x = idom[x];
        idom[w] = x;
    }
    return idom;
}

}  // namespace

dominator_tree dominator_tree::compute(const object_graph& g, std::uint64_t narrow_edges_below) {
    dominator_tree t;
    big_vector<std::uint32_t> idom_pre;
    preorder p = depth_first(g);
    auto dominators = [&]<typename Offset>(Offset) {
        predecessors<Offset> preds = reverse_edges<Offset>(g, p);
        big_vector<std::uint32_t>().swap(p.pre);  // no longer needed: 4 bytes per node less at the peak
        idom_pre = semi_nca(p, std::move(preds));
    };
    // The graph's references and one per root bound the edges from above.
    if (g.reference_count() + g.roots().size() < narrow_edges_below)
        dominators(std::uint32_t{});
    else
        dominators(std::uint64_t{});
    const std::size_t n = p.vertex.size();
    // Retained sizes bottom-up: a node's immediate dominator comes before it in preorder.
    big_vector<std::uint64_t> retained(n, 0);
    for (std::size_t i = 1; i < n; ++i) retained[i] = g.shallow_size(p.vertex[i]);
    for (std::size_t w = n - 1; w >= 1; --w) retained[idom_pre[w]] += retained[w];
    t.idom_.assign(g.size(), unreachable);
    t.retained_.assign(g.size(), 0);
    for (std::size_t i = 1; i < n; ++i) {
        std::uint32_t node = p.vertex[i];
        t.idom_[node] = idom_pre[i] == 0 ? virtual_root : p.vertex[idom_pre[i]];
        t.retained_[node] = retained[i];
    }
    t.reachable_count_ = n - 1;
    t.reachable_bytes_ = retained[0];
    for (std::uint32_t node = 0; node < g.size(); ++node)
        if (t.idom_[node] == unreachable) t.unreachable_bytes_ += g.shallow_size(node);
    return t;
}

dominator_tree::children_index dominator_tree::children() const {
    const std::size_t n = idom_.size();
    children_index c;
    c.begin.assign(n + 2, 0);
    auto parent_slot = [&](std::uint32_t node) -> std::size_t { return idom_[node] == virtual_root ? n : idom_[node]; };
    for (std::uint32_t node = 0; node < n; ++node)
        if (idom_[node] != unreachable) ++c.begin[parent_slot(node) + 1];
    for (std::size_t i = 0; i <= n; ++i) c.begin[i + 1] += c.begin[i];
    c.nodes.resize(c.begin[n + 1]);
    // Filled from each list's end, highest node first (so each list ascends), then shifted back.
    for (std::size_t node = n; node-- > 0;)
        if (idom_[node] != unreachable)
            c.nodes[--c.begin[parent_slot(static_cast<std::uint32_t>(node)) + 1]] = static_cast<std::uint32_t>(node);
    for (std::size_t i = 0; i <= n; ++i) c.begin[i] = c.begin[i + 1];
    c.begin[n + 1] = static_cast<std::uint32_t>(c.nodes.size());
    return c;
}

}  // namespace heapd
