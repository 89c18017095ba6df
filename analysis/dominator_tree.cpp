#include "analysis/dominator_tree.h"

#include <algorithm>

namespace heapd {
inline namespace analysis {
namespace {

// Tells a progress callback how far the steps of the computation are, every 2^20 items of a step.
struct step_progress {
    const progress_callback& progress;
    double begin = 0, share = 0;  // where the current step starts in the whole, and its share
    void start(double step_begin, double step_share) {
        begin = step_begin;
        share = step_share;
        if (progress) progress(begin);
    }
    void at(std::uint64_t done, std::uint64_t total) const {
        if (progress && (done & 0xFFFFF) == 0 && total != 0)
            progress(begin + share * static_cast<double>(done) / static_cast<double>(total));
    }
};

// Depth-first preorder from the virtual root (preorder number 0): vertex[i] is the node numbered i,
// parent[i] the preorder number of its DFS parent; pre[node] is none for unreachable nodes.
// predecessors[i + 1] counts the edges into the node numbered i (the walk meets each edge from a
// reachable node once): the predecessor lists need not read them all again to count them.
// Offset is the type of the predecessor lists' offsets (below), which bounds each count too.
template <typename Node, typename Offset>
struct preorder {
    static constexpr Node none = ~Node{0};
    big_vector<Node> pre, vertex, parent;
    big_vector<Offset> predecessors;
};

template <typename Node, typename Offset>
preorder<Node, Offset> depth_first(const basic_object_graph<Node>& g, const step_progress& steps) {
    constexpr Node none = preorder<Node, Offset>::none;
    preorder<Node, Offset> p;
    p.pre.assign(g.size(), none);
    p.predecessors.assign(std::size_t{g.size()} + 2, 0);
    p.vertex.reserve(std::size_t{g.size()} + 1);  // no copy on growth: these are among the biggest arrays
    p.parent.reserve(std::size_t{g.size()} + 1);
    p.vertex.push_back(basic_dominator_tree<Node>::virtual_root);
    p.parent.push_back(0);
    struct frame {
        Node node;
        std::uint64_t next;  // index of the next reference to follow
    };
    big_vector<frame> stack;
    auto visit = [&](Node node, Node parent) {
        steps.at(p.vertex.size(), g.size());
        p.pre[node] = static_cast<Node>(p.vertex.size());
        p.vertex.push_back(node);
        p.parent.push_back(parent);
        stack.push_back({node, 0});
    };
    for (Node root : g.roots()) {
        if (p.pre[root] == none) visit(root, 0);
        ++p.predecessors[p.pre[root] + 1];  // the virtual root's edge
        while (!stack.empty()) {
            frame& f = stack.back();
            auto refs = g.references(f.node);
            if (f.next == refs.size()) {
                stack.pop_back();
                continue;
            }
            Node w = refs[f.next++];
            if (w == basic_object_graph<Node>::no_node) continue;
            if (p.pre[w] == none) visit(w, p.pre[f.node]);
            ++p.predecessors[p.pre[w] + 1];
        }
    }
    p.predecessors.resize(p.vertex.size() + 1);
    return p;
}

// Predecessor lists in preorder numbers, over reachable nodes only, each node's DFS parent first;
// Offset is std::uint32_t when the edges number fewer than 2^32 (4 bytes per node less at the
// peak), std::uint64_t otherwise.
template <typename Node, typename Offset>
struct predecessors {
    big_vector<Offset> begin;
    big_vector<Node> from;
};

template <typename Node, typename Offset>
predecessors<Node, Offset> reverse_edges(const basic_object_graph<Node>& g, preorder<Node, Offset>& p,
                                         step_progress& steps) {
    const std::size_t n = p.vertex.size();
    predecessors<Node, Offset> r;
    // The depth-first walk counted them: one walk over the edges fills the lists.
    r.begin = std::move(p.predecessors);
    for (std::size_t i = 0; i < n; ++i) r.begin[i + 1] += r.begin[i];
    r.from.resize(r.begin[n]);
    // Filled from each list's end down, so that begin[to + 1] ends where begin[to] was: no copy.
    for (Node root : g.roots()) r.from[--r.begin[p.pre[root] + 1]] = 0;
    for (std::size_t i = 1; i < n; ++i) {
        steps.at(i, n);
        for (Node w : g.references(p.vertex[i]))
            if (w != basic_object_graph<Node>::no_node) r.from[--r.begin[p.pre[w] + 1]] = static_cast<Node>(i);
    }
    // begin[i + 1] now holds list i's start; shift them back into place.
    for (std::size_t i = 0; i < n; ++i) r.begin[i] = r.begin[i + 1];
    r.begin[n] = static_cast<Offset>(r.from.size());
    // Each list starts with the node's DFS parent (one of its predecessors: the tree edge), so that
    // the parents need no array of their own from here on (4 bytes per node less at the peak).
    for (std::size_t w = 1; w < n; ++w) {
        const auto first = r.from.begin() + static_cast<std::ptrdiff_t>(r.begin[w]);
        const auto end = r.from.begin() + static_cast<std::ptrdiff_t>(r.begin[w + 1]);
        if (const auto at = std::find(first, end, p.parent[w]); at != end) std::iter_swap(first, at);
    }
    return r;
}

// Semi-NCA: semidominators by link-eval with iterative path compression, then each immediate
// dominator as the nearest common ancestor of parent and semidominator. Returns idom by preorder.
template <typename Node, typename Offset>
big_vector<Node> semi_nca(std::size_t n, predecessors<Node, Offset> preds, step_progress& steps) {
    constexpr Node none = ~Node{0};
    auto parent = [&preds](std::size_t w) { return preds.from[preds.begin[w]]; };
    big_vector<Node> semi(n), label(n), ancestor(n, none), path;
    for (std::size_t i = 0; i < n; ++i) semi[i] = label[i] = static_cast<Node>(i);
    auto eval = [&](Node v) {
        if (ancestor[v] == none) return v;
        for (Node x = v; ancestor[ancestor[x]] != none; x = ancestor[x]) path.push_back(x);
        while (!path.empty()) {
            Node y = path.back(), a = ancestor[y];
            path.pop_back();
            if (semi[label[a]] < semi[label[y]]) label[y] = label[a];
            ancestor[y] = ancestor[a];
        }
        return label[v];
    };
    steps.start(0.45, 0.35);
    for (std::size_t w = n - 1; w >= 1; --w) {
        steps.at(n - w, n);
        for (Offset e = preds.begin[w]; e < preds.begin[w + 1]; ++e) {
            Node u = eval(preds.from[e]);
            if (semi[u] < semi[w]) semi[w] = semi[u];
        }
        ancestor[w] = parent(w);
    }
    // The second step needs the parents (first in the predecessor lists) but not the forest: freed,
    // and the labels' room reused for the dominators, so that this step is no peak of its own.
    big_vector<Node>().swap(ancestor);
    big_vector<Node> idom = std::move(label);
    std::fill(idom.begin(), idom.end(), 0);
    steps.start(0.8, 0.1);
    for (std::size_t w = 1; w < n; ++w) {
        steps.at(w, n);
        Node x = parent(w);
        while (x > semi[w]) x = idom[x];
        idom[w] = x;
    }
    return idom;
}

}  // namespace

template <typename Node>
basic_dominator_tree<Node> basic_dominator_tree<Node>::compute(const graph& g, std::uint64_t narrow_edges_below,
                                                               const progress_callback& progress) {
    basic_dominator_tree t;
    big_vector<Node> idom_pre;
    // Steps and their shares of the time, roughly: depth-first 0.3, predecessors 0.15,
    // semidominators 0.35, immediate dominators 0.1, retained sizes 0.1.
    step_progress steps{progress};
    big_vector<Node> vertex;  // by preorder number, the node (preorder.vertex)
    auto dominators = [&]<typename Offset>(Offset) {
        steps.start(0, 0.3);
        preorder<Node, Offset> p = depth_first<Node, Offset>(g, steps);
        steps.start(0.3, 0.15);
        predecessors<Node, Offset> preds = reverse_edges<Node, Offset>(g, p, steps);
        // No longer needed: 2 Nodes per node less at the peak.
        big_vector<Node>().swap(p.pre);
        big_vector<Node>().swap(p.parent);
        vertex = std::move(p.vertex);
        idom_pre = semi_nca(vertex.size(), std::move(preds), steps);
    };
    // The graph's references and one per root bound the edges from above.
    if (g.reference_count() + g.roots().size() < narrow_edges_below)
        dominators(std::uint32_t{});
    else
        dominators(std::uint64_t{});
    const std::size_t n = vertex.size();
    steps.start(0.9, 0.1);
    // Retained sizes bottom-up: a node's immediate dominator comes before it in preorder.
    big_vector<std::uint64_t> retained(n, 0);
    for (std::size_t i = 1; i < n; ++i) retained[i] = g.shallow_size(vertex[i]);
    for (std::size_t w = n - 1; w >= 1; --w) retained[idom_pre[w]] += retained[w];
    t.idom_.assign(g.size(), unreachable);
    t.retained_.assign(g.size(), 0);
    for (std::size_t i = 1; i < n; ++i) {
        Node node = vertex[i];
        t.idom_[node] = idom_pre[i] == 0 ? virtual_root : vertex[idom_pre[i]];
        t.retained_[node] = retained[i];
    }
    t.reachable_count_ = n - 1;
    t.reachable_bytes_ = retained[0];
    for (Node node = 0; node < g.size(); ++node)
        if (t.idom_[node] == unreachable) t.unreachable_bytes_ += g.shallow_size(node);
    if (progress) progress(1);
    return t;
}

template <typename Node>
typename basic_dominator_tree<Node>::children_index basic_dominator_tree<Node>::children() const {
    const std::size_t n = idom_.size();
    children_index c;
    c.begin.assign(n + 2, 0);
    auto parent_slot = [&](Node node) -> std::size_t { return idom_[node] == virtual_root ? n : idom_[node]; };
    for (Node node = 0; node < n; ++node)
        if (idom_[node] != unreachable) ++c.begin[parent_slot(node) + 1];
    for (std::size_t i = 0; i <= n; ++i) c.begin[i + 1] += c.begin[i];
    c.nodes.resize(c.begin[n + 1]);
    // Filled from each list's end, highest node first (so each list ascends), then shifted back.
    for (std::size_t node = n; node-- > 0;)
        if (idom_[node] != unreachable)
            c.nodes[--c.begin[parent_slot(static_cast<Node>(node)) + 1]] = static_cast<Node>(node);
    for (std::size_t i = 0; i <= n; ++i) c.begin[i] = c.begin[i + 1];
    c.begin[n + 1] = static_cast<Node>(c.nodes.size());
    return c;
}

template class basic_dominator_tree<std::uint32_t>;
template class basic_dominator_tree<std::uint64_t>;

}  // namespace analysis
}  // namespace heapd
