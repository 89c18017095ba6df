// The dominator tree cut for a picture, checked against the whole tree it was cut from: every shown
// object's numbers, the "others" sums, the order, the bounds, and which objects made the cut.
#include "analysis/dominator_outline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "support/shaped_heap.h"

namespace heapd {
namespace {

using test::analyzed;
using test::shaped_heap;

// What must hold of any outline of a: parents first, each shown object's numbers as the tree has
// them, and under each shown node (and the heap) its shown children plus its others adding up to
// exactly what it retains beyond itself.
void check_outline(const analyzed& a, const std::vector<tree_node>& out, const outline_options& o) {
    const auto children = a.dom.children();
    const std::uint64_t floor = static_cast<std::uint64_t>(static_cast<double>(a.dom.reachable_bytes()) * o.min_share);
    std::map<std::int64_t, std::uint64_t> below;  // parent index -> retained bytes of its outline children
    std::map<std::int64_t, std::uint64_t> count;  // parent index -> objects stood for
    std::size_t objects = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
        const tree_node& n = out[i];
        ASSERT_LT(n.parent, static_cast<std::int64_t>(i));
        ASSERT_GE(n.parent, -1);
        if (n.parent >= 0) {
            ASSERT_EQ(out[static_cast<std::size_t>(n.parent)].others, 0u) << "others have no children";
        }
        below[n.parent] += n.retained_bytes;
        count[n.parent] += n.others == 0 ? 1 : n.others;
        if (n.others != 0) continue;
        ++objects;
        const auto node = a.graph.node_of(n.id);
        ASSERT_NE(node, object_graph::no_node);
        EXPECT_EQ(n.retained_bytes, a.dom.retained(node));
        EXPECT_EQ(n.shallow_bytes, a.graph.shallow_size(node));
        EXPECT_GE(n.retained_bytes, floor);
        const std::int64_t parent_node =
            n.parent < 0 ? -1 : static_cast<std::int64_t>(a.graph.node_of(out[static_cast<std::size_t>(n.parent)].id));
        const auto idom = a.dom.idom(node);
        EXPECT_EQ(parent_node, idom == dominator_tree::virtual_root ? -1 : static_cast<std::int64_t>(idom));
    }
    EXPECT_LE(objects, o.max_nodes);
    EXPECT_EQ(below[-1], a.dom.reachable_bytes());
    EXPECT_EQ(count[-1], children.begin[a.graph.size() + 1] - children.begin[a.graph.size()]);
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (out[i].others != 0) continue;
        const auto node = a.graph.node_of(out[i].id);
        const auto p = static_cast<std::int64_t>(i);
        EXPECT_EQ(below[p], out[i].retained_bytes - out[i].shallow_bytes) << out[i].class_name;
        EXPECT_EQ(count[p], children.begin[node + 1] - children.begin[node]) << out[i].class_name;
    }
}

TEST(dominator_outline, keeps_the_big_retainers_and_sums_the_rest_per_parent) {
    shaped_heap h;  // 100 sessions of 2,000 bytes, a chain of 3,000 nodes, 200 blobs
    analyzed a(h.b);
    const auto children = a.dom.children();
    outline_options o;
    o.min_share = 0.005;
    const auto out = outline_dominator_tree(a.graph, a.dom, children, a.classes, o);
    check_outline(a, out, o);
    // Each session (about 2 KB of some 330 KB) is above half a percent: all 100 shown, under the array.
    std::size_t sessions = 0, others = 0;
    for (const tree_node& n : out) {
        sessions += n.class_name == "Holder$Session";
        others += n.others != 0;
    }
    EXPECT_EQ(sessions, 100u);
    EXPECT_GT(others, 0u);
    // The 200 blobs, each held by its own root and too small to show, are one node of their class.
    bool blobs = false;
    for (const tree_node& n : out) blobs = blobs || (n.parent == -1 && n.class_name == "Blob" && n.others == 200);
    EXPECT_TRUE(blobs);
}

TEST(dominator_outline, a_long_chain_is_cut_at_the_node_bound_biggest_first) {
    shaped_heap h(10, 100, 3000, 10, 100);
    analyzed a(h.b);
    const auto children = a.dom.children();
    outline_options o;
    o.min_share = 0.0001;
    o.max_nodes = 500;
    const auto out = outline_dominator_tree(a.graph, a.dom, children, a.classes, o);
    check_outline(a, out, o);
    std::uint64_t smallest_shown = ~0ull;
    std::set<std::uint64_t> shown;
    for (const tree_node& n : out)
        if (n.others == 0) {
            smallest_shown = std::min(smallest_shown, n.retained_bytes);
            shown.insert(n.id);
        }
    EXPECT_EQ(shown.size(), 500u);
    // Biggest first: no object left out under a shown parent retains more than the smallest shown.
    for (const tree_node& n : out) {
        if (n.others != 0) continue;
        const auto node = a.graph.node_of(n.id);
        for (auto i = children.begin[node]; i < children.begin[node + 1]; ++i) {
            const auto c = children.nodes[i];
            if (!shown.count(a.graph.id(c))) {
                EXPECT_LE(a.dom.retained(c), smallest_shown);
            }
        }
    }
}

TEST(dominator_outline, nothing_shown_when_no_object_reaches_the_share) {
    shaped_heap h(10, 100, 10, 10, 100);
    analyzed a(h.b);
    const auto children = a.dom.children();
    outline_options o;
    o.min_share = 1.0;  // only an object retaining the whole heap; there is none
    const auto out = outline_dominator_tree(a.graph, a.dom, children, a.classes, o);
    // The heap's children by class, biggest first: five classes (Holder's class object, blobs, session
    // 7, Derived, the WeakReference), so the fifth is named too rather than be "the rest".
    ASSERT_EQ(out.size(), 5u);
    for (std::size_t i = 0; i < out.size(); ++i) {
        EXPECT_EQ(out[i].parent, -1);
        EXPECT_GT(out[i].others, 0u);
        EXPECT_FALSE(out[i].class_name.empty()) << i;
        if (i > 0) {
            EXPECT_LE(out[i].retained_bytes, out[i - 1].retained_bytes);
        }
    }
    // With three classes of their own, the two retaining least go together.
    o.others_classes = 3;
    const auto fewer = outline_dominator_tree(a.graph, a.dom, children, a.classes, o);
    ASSERT_EQ(fewer.size(), 4u);
    EXPECT_TRUE(fewer[3].class_name.empty());
    EXPECT_EQ(fewer[3].others, out[3].others + out[4].others);
    check_outline(a, fewer, o);
    check_outline(a, out, o);
}

}  // namespace
}  // namespace heapd
