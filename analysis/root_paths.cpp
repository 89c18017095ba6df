#include "analysis/root_paths.h"

#include <algorithm>

namespace heapd {
inline namespace analysis {

namespace {

// Roots that hold an object only while a thread runs a method: a stack frame's local, a native
// frame's or a JNI call's reference, a blocked thread's monitor.
constexpr std::uint32_t transient_kinds =
    (1u << static_cast<unsigned>(root_kind::java_frame)) | (1u << static_cast<unsigned>(root_kind::native_stack)) |
    (1u << static_cast<unsigned>(root_kind::jni_local)) | (1u << static_cast<unsigned>(root_kind::thread_block));

}  // namespace

template <typename Node>
basic_root_paths<Node> basic_root_paths<Node>::compute(const basic_object_graph<Node>& g) {
    basic_root_paths p;
    constexpr Node none = basic_object_graph<Node>::no_node;
    p.parent_.assign(g.size(), none);
    big_vector<Node> queue;
    queue.reserve(g.size());
    std::size_t head = 0;
    auto search = [&] {
        for (; head < queue.size(); ++head) {
            Node u = queue[head];
            for (Node v : g.references(u)) {
                if (v == none || p.parent_[v] != none) continue;
                p.parent_[v] = u;
                queue.push_back(v);
            }
        }
    };
    // Lasting roots (classes' statics, JNI globals, threads, ...) first, then frames and the like
    // for what only they reach: a map held by a static field and, at the moment of a dump, by the
    // frame of the method adding to it, gets its path from the static field.
    for (int pass = 0; pass < 2; ++pass) {
        for (std::size_t i = 0; i < g.roots().size(); ++i) {
            const Node r = g.roots()[i];
            const bool lasting = (g.root_kinds()[i] & ~transient_kinds) != 0;
            if (p.parent_[r] != none || lasting != (pass == 0)) continue;
            p.parent_[r] = r;
            queue.push_back(r);
        }
        search();
    }
    return p;
}

template <typename Node>
std::vector<Node> basic_root_paths<Node>::path_to(Node node) const {
    std::vector<Node> path;
    if (node >= parent_.size() || !reachable(node)) return path;
    for (Node v = node;; v = parent_[v]) {
        path.push_back(v);
        if (parent_[v] == v) break;
    }
    std::reverse(path.begin(), path.end());
    return path;
}

template <typename Node>
std::vector<std::vector<Node>> paths_from_roots(const basic_object_graph<Node>& g, std::type_identity_t<Node> target,
                                                unsigned max_paths) {
    constexpr Node none = basic_object_graph<Node>::no_node;
    std::vector<std::vector<Node>> paths;
    if (target >= g.size() || max_paths == 0) return paths;
    // Predecessor lists: who references each node.
    big_vector<std::uint64_t> begin(std::size_t{g.size()} + 1, 0);
    for (Node u = 0; u < g.size(); ++u)
        for (Node v : g.references(u))
            if (v != none) ++begin[v + 1];
    for (std::size_t i = 0; i < g.size(); ++i) begin[i + 1] += begin[i];
    big_vector<Node> preds(begin[g.size()]);
    {
        big_vector<std::uint64_t> at(begin.begin(), begin.end() - 1);
        for (Node u = 0; u < g.size(); ++u)
            for (Node v : g.references(u))
                if (v != none) preds[at[v]++] = u;
    }
    // Backwards from the target; next[v] is v's successor on its shortest path to the target.
    big_vector<Node> next(g.size(), none);
    big_vector<Node> queue = {target};
    next[target] = target;
    for (std::size_t head = 0; head < queue.size() && paths.size() < max_paths; ++head) {
        Node v = queue[head];
        if (g.root_kinds_of(v) != 0) {
            std::vector<Node> path = {v};
            for (Node w = v; w != target; w = next[w]) path.push_back(next[w]);
            paths.push_back(std::move(path));
        }
        for (std::uint64_t i = begin[v]; i < begin[v + 1]; ++i) {
            Node u = preds[i];
            if (next[u] != none) continue;
            next[u] = v;
            queue.push_back(u);
        }
    }
    return paths;
}

template class basic_root_paths<std::uint32_t>;
template class basic_root_paths<std::uint64_t>;
template std::vector<std::vector<std::uint32_t>> paths_from_roots(const object_graph&, std::uint32_t, unsigned);
template std::vector<std::vector<std::uint64_t>> paths_from_roots(const wide_object_graph&, std::uint64_t, unsigned);

}  // namespace analysis
}  // namespace heapd
