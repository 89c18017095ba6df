#include "analysis/leak_suspects.h"

#include <algorithm>
#include <map>

#include "analysis/path_description.h"

namespace heapd {
inline namespace analysis {
namespace {

// Reads the dominator tree for the suspects of one analysis.
template <typename Node>
struct suspect_finder {
    static constexpr Node no_node = basic_object_graph<Node>::no_node;
    static constexpr std::uint32_t none_key = ~std::uint32_t{0};
    const basic_object_graph<Node>& g;
    const basic_dominator_tree<Node>& d;
    const typename basic_dominator_tree<Node>::children_index& kids;
    const class_table& classes;
    const basic_root_paths<Node>& paths;
    const suspect_options& opt;
    std::uint64_t threshold = 0;

    // What v keeps alive (of the focus heap, when there is one), and whether v is another heap's.
    std::uint64_t retained(Node v) const { return opt.focus ? opt.focus->retained[v] : d.retained(v); }
    bool given(Node v) const { return opt.focus != nullptr && opt.focus->outside[v] != 0; }

    std::span<const Node> children(std::size_t slot) const {
        return {kids.nodes.data() + kids.begin[slot], kids.nodes.data() + kids.begin[slot + 1]};
    }
    dominator_entry entry(Node v) const { return {g.id(v), node_name(g, classes, v), g.shallow_size(v), retained(v)}; }
    bool is_class_object(Node v) const { return classes.find(g.id(v)) != nullptr; }

    // The biggest child of v (lowest node on ties), or no_node.
    Node biggest_child(Node v) const {
        Node best = no_node;
        for (Node c : children(v))
            if (best == no_node || retained(c) > retained(best)) best = c;
        return best;
    }
    bool keeps_most(Node child, Node parent) const {
        return child != no_node &&
               static_cast<double>(retained(child)) >= opt.most * static_cast<double>(retained(parent));
    }

    // Top-level objects retaining the threshold; class objects give way to their big children, and
    // another heap's objects to theirs, never suspects themselves.
    std::vector<Node> object_suspects() const {
        std::vector<Node> out, work;
        for (Node c : children(g.size()))
            if (retained(c) >= threshold) work.push_back(c);
        while (!work.empty()) {
            Node u = work.back();
            work.pop_back();
            if (is_class_object(u) || given(u)) {
                std::size_t before = work.size();
                for (Node c : children(u))
                    if (retained(c) >= threshold) work.push_back(c);
                if (work.size() > before || given(u)) continue;
            }
            out.push_back(u);
        }
        return out;
    }

    void accumulate(Node u, leak_suspect& s) const {
        Node at = u;
        for (;;) {
            Node c = biggest_child(at);
            if (!keeps_most(c, at) || g.class_key(c) == g.class_key(at)) break;
            at = c;
        }
        s.accumulation = entry(at);
        s.chain_length = 1;
        for (Node v = at;;) {
            Node c = biggest_child(v);
            if (c == no_node || g.class_key(c) != g.class_key(at)) break;
            if (!keeps_most(c, v) && children(v).size() > 1) break;
            ++s.chain_length;
            v = c;
        }
        s.accumulated = group_by_class(children(at), [](Node v) { return v; });
        std::vector<Node> path = paths.path_to(at);
        s.path = describe_path(g, classes, path);
    }

    // Nodes grouped by the class of key_of(node): count and retained bytes, biggest first.
    template <class Key>
    std::vector<accumulated_class> group_by_class(std::span<const Node> nodes, Key key_of) const {
        std::map<std::string, accumulated_class> by;
        for (Node v : nodes) {
            Node k = key_of(v);
            std::string name = k >= g.size() ? "<GC roots>" : node_name(g, classes, k);
            if (k < g.size() && is_class_object(k)) name = "java.lang.Class";
            accumulated_class& a = by[name];
            a.class_name = name;
            ++a.count;
            a.retained_bytes += retained(v);
        }
        std::vector<accumulated_class> out;
        for (auto& [name, a] : by) out.push_back(std::move(a));
        std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
            return a.retained_bytes != b.retained_bytes ? a.retained_bytes > b.retained_bytes
                                                        : a.class_name < b.class_name;
        });
        if (out.size() > opt.max_groups) out.resize(opt.max_groups);
        return out;
    }

    // Per class, what its outermost instances outside the covered subtrees retain.
    struct class_tally {
        std::vector<std::uint64_t> bytes, count;
        std::vector<Node> biggest;
        std::vector<std::uint8_t> outermost;  // per node: an outermost instance of its class
    };
    class_tally tally_classes(const std::vector<std::uint8_t>& covered) const {
        class_tally t{std::vector<std::uint64_t>(g.key_count(), 0), std::vector<std::uint64_t>(g.key_count(), 0),
                      std::vector<Node>(g.key_count(), no_node), std::vector<std::uint8_t>(g.size(), 0)};
        std::vector<std::uint32_t> active(g.key_count(), 0);
        struct frame {
            Node node;
            std::uint64_t next;
            bool counted;  // of the focus heap (every object when there is none)
        };
        std::vector<frame> stack;
        auto enter = [&](Node v) {
            std::uint32_t k = g.class_key(v);
            const bool counted = !given(v);
            if (counted && active[k]++ == 0) {
                t.outermost[v] = 1;
                t.bytes[k] += retained(v);
                ++t.count[k];
                if (t.biggest[k] == no_node || retained(v) > retained(t.biggest[k])) t.biggest[k] = v;
            }
            stack.push_back({v, kids.begin[v], counted});
        };
        for (Node top : children(g.size())) {
            if (covered[top]) continue;
            enter(top);
            while (!stack.empty()) {
                frame& f = stack.back();
                if (f.next == kids.begin[f.node + 1]) {
                    if (f.counted) --active[g.class_key(f.node)];
                    stack.pop_back();
                    continue;
                }
                Node c = kids.nodes[f.next++];
                if (!covered[c]) {
                    enter(c);
                    continue;
                }
                // A covered subtree's bytes belong to its suspect: take them out of the classes above.
                for (const frame& above : stack)
                    if (t.outermost[above.node]) t.bytes[g.class_key(above.node)] -= retained(c);
            }
        }
        return t;
    }

    // Class suspects, biggest first; each one's instances are covered before the next is chosen,
    // so a class held inside another suspect class's instances is not reported again.
    std::vector<leak_suspect> class_suspects(const std::vector<Node>& objects) const {
        std::vector<std::uint8_t> covered(g.size(), 0);  // roots of subtrees already explained
        for (Node u : objects) covered[u] = 1;
        std::vector<leak_suspect> out;
        while (out.size() < opt.max_suspects) {
            class_tally t = tally_classes(covered);
            std::uint32_t k = none_key;
            for (std::uint32_t c = 0; c < g.key_count(); ++c)
                if (t.bytes[c] >= threshold && t.biggest[c] != no_node && (k == none_key || t.bytes[c] > t.bytes[k]))
                    k = c;
            if (k == none_key) break;
            leak_suspect s;
            s.is_class = true;
            s.suspect = entry(t.biggest[k]);
            s.suspect.class_name = g.key_name(k);
            s.instances = t.count[k];
            s.retained_bytes = t.bytes[k];
            s.accumulation = s.suspect;
            s.chain_length = 1;
            std::vector<Node> instances;
            for (Node v = 0; v < g.size(); ++v)
                if (t.outermost[v] && g.class_key(v) == k) {
                    instances.push_back(v);
                    covered[v] = 1;
                }
            s.held_by = group_by_class(instances, [&](Node v) { return d.idom(v); });
            // Which instances add up: many class objects (statics) say nothing until named.
            const std::size_t top = std::min<std::size_t>(instances.size(), 5);
            std::partial_sort(
                instances.begin(), instances.begin() + static_cast<std::ptrdiff_t>(top), instances.end(),
                [&](Node a, Node b) { return retained(a) != retained(b) ? retained(a) > retained(b) : a < b; });
            for (std::size_t i = 0; i < top; ++i) s.biggest.push_back(entry(instances[i]));
            s.path = describe_path(g, classes, paths.path_to(t.biggest[k]));
            out.push_back(std::move(s));
        }
        return out;
    }
};

}  // namespace

template <typename Node>
std::vector<leak_suspect> find_leak_suspects(const basic_object_graph<Node>& g, const basic_dominator_tree<Node>& d,
                                             const typename basic_dominator_tree<Node>::children_index& children,
                                             const class_table& classes, const basic_root_paths<Node>& paths,
                                             const suspect_options& options) {
    suspect_finder<Node> f{g, d, children, classes, paths, options};
    double reachable = static_cast<double>(options.focus ? options.focus->reachable_bytes : d.reachable_bytes());
    f.threshold = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(options.threshold * reachable));
    std::vector<Node> objects = f.object_suspects();
    std::vector<leak_suspect> out;
    for (Node u : objects) {
        leak_suspect s;
        s.suspect = f.entry(u);
        s.instances = 1;
        s.retained_bytes = f.retained(u);
        f.accumulate(u, s);
        out.push_back(std::move(s));
    }
    for (leak_suspect& s : f.class_suspects(objects)) out.push_back(std::move(s));
    for (leak_suspect& s : out) s.share = reachable > 0 ? static_cast<double>(s.retained_bytes) / reachable : 0;
    std::sort(out.begin(), out.end(), [](const leak_suspect& a, const leak_suspect& b) {
        return a.retained_bytes != b.retained_bytes ? a.retained_bytes > b.retained_bytes : a.suspect.id < b.suspect.id;
    });
    if (out.size() > options.max_suspects) out.resize(options.max_suspects);
    return out;
}

template std::vector<leak_suspect> find_leak_suspects(const object_graph&, const dominator_tree&,
                                                      const dominator_tree::children_index&, const class_table&,
                                                      const root_paths&, const suspect_options&);
template std::vector<leak_suspect> find_leak_suspects(const wide_object_graph&, const wide_dominator_tree&,
                                                      const wide_dominator_tree::children_index&, const class_table&,
                                                      const wide_root_paths&, const suspect_options&);

}  // namespace analysis
}  // namespace heapd
