#include "analysis/dominator_outline.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <unordered_map>

#include "analysis/path_description.h"

namespace heapd {
inline namespace analysis {

template <typename Node>
std::vector<tree_node> outline_dominator_tree(const basic_object_graph<Node>& g, const basic_dominator_tree<Node>& d,
                                              const typename basic_dominator_tree<Node>::children_index& children,
                                              const class_table& classes, const outline_options& options) {
    const std::uint64_t total = d.reachable_bytes();
    const std::uint64_t floor = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(std::ceil(static_cast<double>(total) * options.min_share)));
    const std::size_t root_slot = g.size();  // the virtual root's children list

    // A node that may be shown, with the index of its shown parent (-1: the heap).
    struct candidate {
        std::uint64_t retained;
        Node node;
        std::int64_t parent;
        bool operator<(const candidate& o) const {
            return retained != o.retained ? retained < o.retained : node > o.node;
        }
    };
    std::priority_queue<candidate> queue;
    auto offer_children = [&](std::size_t slot, std::int64_t parent) {
        for (std::uint64_t i = children.begin[slot]; i < children.begin[slot + 1]; ++i) {
            const Node c = children.nodes[i];
            if (d.retained(c) >= floor) queue.push({d.retained(c), c, parent});
        }
    };

    std::vector<tree_node> out;
    std::vector<Node> nodes;                       // the graph node of each object in out
    std::unordered_map<Node, std::int64_t> index;  // and back
    offer_children(root_slot, -1);
    while (!queue.empty() && nodes.size() < options.max_nodes) {
        const candidate c = queue.top();
        queue.pop();
        const auto at = static_cast<std::int64_t>(out.size());
        out.push_back({g.id(c.node), node_name(g, classes, c.node), g.shallow_size(c.node), c.retained, c.parent, 0});
        nodes.push_back(c.node);
        index.emplace(c.node, at);
        offer_children(c.node, at);
    }

    // The rest of each shown node's children, and of the heap's, after the objects: one node per class
    // for the classes retaining most, one for all other classes together.
    std::unordered_map<std::uint32_t, tree_node> by_class;
    auto add_others = [&](std::size_t slot, std::int64_t parent) {
        by_class.clear();
        for (std::uint64_t i = children.begin[slot]; i < children.begin[slot + 1]; ++i) {
            const Node c = children.nodes[i];
            if (index.count(c)) continue;
            tree_node& rest = by_class[g.class_key(c)];
            ++rest.others;
            rest.shallow_bytes += g.shallow_size(c);
            rest.retained_bytes += d.retained(c);
        }
        std::vector<std::pair<std::uint32_t, tree_node>> groups(by_class.begin(), by_class.end());
        std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
            return a.second.retained_bytes != b.second.retained_bytes
                       ? a.second.retained_bytes > b.second.retained_bytes
                       : a.first < b.first;
        });
        tree_node mixed;
        for (std::size_t k = 0; k < groups.size(); ++k) {
            tree_node& group = groups[k].second;
            group.parent = parent;
            if (k < options.others_classes || groups.size() == options.others_classes + 1) {
                group.class_name = g.key_name(groups[k].first);
                out.push_back(std::move(group));
            } else {
                mixed.parent = parent;
                mixed.others += group.others;
                mixed.shallow_bytes += group.shallow_bytes;
                mixed.retained_bytes += group.retained_bytes;
            }
        }
        if (mixed.others > 0) out.push_back(std::move(mixed));
    };
    add_others(root_slot, -1);
    for (std::size_t i = 0; i < nodes.size(); ++i) add_others(nodes[i], static_cast<std::int64_t>(i));
    return out;
}

template std::vector<tree_node> outline_dominator_tree(const object_graph&, const dominator_tree&,
                                                       const dominator_tree::children_index&, const class_table&,
                                                       const outline_options&);
template std::vector<tree_node> outline_dominator_tree(const wide_object_graph&, const wide_dominator_tree&,
                                                       const wide_dominator_tree::children_index&, const class_table&,
                                                       const outline_options&);

}  // namespace analysis
}  // namespace heapd
