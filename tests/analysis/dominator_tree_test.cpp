// Dominators and retained sizes on random object graphs, checked against the definitions:
// a node's retained size is what becomes unreachable when it goes, and its immediate dominator
// is the closest node every root path to it passes through.
#include "analysis/dominator_tree.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "analysis/census.h"
#include "analysis/object_graph.h"
#include "analysis/root_paths.h"
#include "formats/hprof/heap_walk.h"
#include "support/hprof_builder.h"
#include "support/shaped_heap.h"

namespace heapd {
namespace {

using test::analyzed;
using test::hprof_builder;
using test::values;

constexpr std::uint8_t t_object = 2, t_long = 11;
constexpr std::uint64_t object_class = 0x100, node_class = 0x101, weak_class = 0x102, reference_class = 0x103;

// A dump of n Node objects {Node a, b, c; long pad} with random links, random roots, and a few
// WeakReferences whose referent must not count as a reference.
struct random_heap {
    hprof_builder b{8};
    std::vector<std::vector<std::uint64_t>> links;  // per node, the ids it holds strongly
    std::vector<std::uint64_t> roots;
    // Ids in a scrambled order (37 is prime to the sizes used), so the graph must sort them.
    static std::uint64_t id_of(std::size_t i) { return 0x10000 + (i * 37 % 60 + i / 60 * 60) * 32; }

    random_heap(std::size_t n, std::uint32_t seed, double density, double root_share = 0.1) {
        std::mt19937 rng(seed);
        std::uniform_int_distribution<std::size_t> pick(0, n - 1);
        std::bernoulli_distribution link(density), is_root(root_share);
        const std::pair<std::uint64_t, const char*> names[] = {{object_class, "java/lang/Object"},
                                                               {node_class, "demo/Node"},
                                                               {reference_class, "java/lang/ref/Reference"},
                                                               {weak_class, "java/lang/ref/WeakReference"}};
        std::uint32_t serial = 1;
        for (auto [id, name] : names) {
            b.utf8(0x900 + serial, name).load_class(serial, id, 0, 0x900 + serial);
            ++serial;
        }
        b.utf8(0x801, "a").utf8(0x802, "b").utf8(0x803, "c").utf8(0x804, "pad").utf8(0x805, "referent");
        b.begin_segment();
        b.class_dump(object_class, 0, {});
        b.class_dump(node_class, object_class,
                     {{0x801, t_object}, {0x802, t_object}, {0x803, t_object}, {0x804, t_long}});
        b.class_dump(reference_class, object_class, {{0x805, t_object}});
        b.class_dump(weak_class, reference_class, {});
        links.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            values v(8);
            for (int f = 0; f < 3; ++f) {
                std::uint64_t to = link(rng) ? id_of(pick(rng)) : 0;
                v.id(to);
                if (to != 0) links[i].push_back(to);
            }
            v.u8(i);
            b.instance(id_of(i), node_class, v.bytes());
            if (is_root(rng) || i == 0) roots.push_back(id_of(i));
        }
        // Weak references from roots to random nodes: they keep nothing alive.
        for (std::size_t k = 0; k < 3; ++k) {
            std::uint64_t weak = 0x900000 + k * 16;
            b.instance(weak, weak_class, values(8).id(id_of(pick(rng))).bytes());
            roots.push_back(weak);
        }
        for (std::uint64_t r : roots) b.root_jni_global(r, 0);
        b.end_segment();
    }
};

// Nodes reachable from the roots when `removed` is taken out of the graph.
std::vector<bool> reachable_without(const object_graph& g, std::uint32_t removed) {
    std::vector<bool> seen(g.size(), false);
    std::vector<std::uint32_t> work;
    for (std::uint32_t r : g.roots())
        if (r != removed && !seen[r]) {
            seen[r] = true;
            work.push_back(r);
        }
    while (!work.empty()) {
        std::uint32_t v = work.back();
        work.pop_back();
        for (std::uint32_t w : g.references(v))
            if (w != object_graph::no_node && w != removed && !seen[w]) {
                seen[w] = true;
                work.push_back(w);
            }
    }
    return seen;
}

void check_against_definitions(std::size_t n, std::uint32_t seed, double density, double root_share = 0.1) {
    random_heap heap(n, seed, density, root_share);
    analyzed a(heap.b);
    const object_graph& g = a.graph;
    ASSERT_EQ(g.size(), n + 3 + 4);  // nodes, weak references, classes
    const std::vector<bool> all = reachable_without(g, object_graph::no_node);
    std::uint64_t reachable_bytes = 0;
    for (std::uint32_t v = 0; v < g.size(); ++v) {
        ASSERT_EQ(a.dom.reachable(v), all[v]) << "node " << v;
        if (all[v]) reachable_bytes += g.shallow_size(v);
    }
    EXPECT_EQ(a.dom.reachable_bytes(), reachable_bytes);
    for (std::uint32_t v = 0; v < g.size(); ++v) {
        if (!all[v]) continue;
        const std::vector<bool> without = reachable_without(g, v);
        std::uint64_t freed = 0;
        std::vector<std::uint32_t> dominated;  // nodes v strictly dominates
        for (std::uint32_t w = 0; w < g.size(); ++w)
            if (all[w] && (w == v || !without[w])) {
                freed += g.shallow_size(w);
                if (w != v) dominated.push_back(w);
            }
        EXPECT_EQ(a.dom.retained(v), freed) << "seed " << seed << " node " << v;
        // v is the immediate dominator of each node it dominates whose idom it dominates not.
        for (std::uint32_t w : dominated) {
            std::uint32_t d = a.dom.idom(w);
            ASSERT_NE(d, dominator_tree::virtual_root);
            bool v_dominates_d = d == v || std::find(dominated.begin(), dominated.end(), d) != dominated.end();
            EXPECT_TRUE(v_dominates_d) << "seed " << seed << ": " << v << " dominates " << w << " but not its idom "
                                       << d;
        }
    }
}

TEST(dominator_tree, matches_the_definitions_on_random_graphs) {
    for (std::uint32_t seed = 1; seed <= 30; ++seed) check_against_definitions(60, seed, seed % 3 == 0 ? 0.6 : 0.3);
}

// Graphs where many nodes are roots and many references point at them (as each instance points at
// its class, a root for the JDK's classes) match the definitions too.
TEST(dominator_tree, matches_the_definitions_where_many_references_point_at_roots) {
    for (std::uint32_t seed = 1; seed <= 40; ++seed) check_against_definitions(60, seed, 0.5, 0.2 + 0.02 * (seed % 10));
}

// Graphs of 2^32 references or more keep predecessor offsets in 64 bits: the same tree, forced
// here on small graphs.
TEST(dominator_tree, wide_predecessor_offsets_give_the_same_tree) {
    for (std::uint32_t seed = 1; seed <= 10; ++seed) {
        random_heap heap(200, seed, 0.4);
        analyzed a(heap.b);
        const dominator_tree wide = dominator_tree::compute(a.graph, 0);
        ASSERT_EQ(wide.reachable_count(), a.dom.reachable_count());
        EXPECT_EQ(wide.reachable_bytes(), a.dom.reachable_bytes());
        EXPECT_EQ(wide.unreachable_bytes(), a.dom.unreachable_bytes());
        for (std::uint32_t v = 0; v < a.graph.size(); ++v) {
            EXPECT_EQ(wide.idom(v), a.dom.idom(v)) << "seed " << seed << " node " << v;
            EXPECT_EQ(wide.retained(v), a.dom.retained(v)) << "seed " << seed << " node " << v;
        }
    }
}

// Heaps of 2^32 - 1 objects or more take 64-bit node numbers everywhere (graph, tree, children,
// root paths): the same dominators, retained sizes, children and paths, forced on small graphs.
TEST(dominator_tree, sixty_four_bit_nodes_give_the_same_tree_and_paths) {
    for (std::uint32_t seed = 1; seed <= 10; ++seed) {
        random_heap heap(300, seed, 0.4);
        analyzed a(heap.b);
        graph_options options;
        options.instances_reference_their_class = false;  // as analyzed builds its graph
        auto g = wide_object_graph::build(a.idx, a.classes, a.census, options);
        ASSERT_TRUE(g.has_value());
        ASSERT_EQ(g->size(), a.graph.size());
        const wide_dominator_tree wide = wide_dominator_tree::compute(*g);
        ASSERT_EQ(wide.reachable_count(), a.dom.reachable_count());
        EXPECT_EQ(wide.reachable_bytes(), a.dom.reachable_bytes());
        EXPECT_EQ(wide.unreachable_bytes(), a.dom.unreachable_bytes());
        auto as_wide = [](std::uint32_t d) -> std::uint64_t {
            return d == dominator_tree::virtual_root  ? wide_dominator_tree::virtual_root
                   : d == dominator_tree::unreachable ? wide_dominator_tree::unreachable
                                                      : d;
        };
        for (std::uint32_t v = 0; v < a.graph.size(); ++v) {
            ASSERT_EQ(wide.idom(v), as_wide(a.dom.idom(v))) << "seed " << seed << " node " << v;
            ASSERT_EQ(wide.retained(v), a.dom.retained(v)) << "seed " << seed << " node " << v;
        }
        const auto narrow_children = a.dom.children();
        const auto wide_children = wide.children();
        ASSERT_TRUE(std::equal(narrow_children.begin.begin(), narrow_children.begin.end(), wide_children.begin.begin(),
                               wide_children.begin.end()));
        ASSERT_TRUE(std::equal(narrow_children.nodes.begin(), narrow_children.nodes.end(), wide_children.nodes.begin(),
                               wide_children.nodes.end()));
        const root_paths narrow_paths = root_paths::compute(a.graph);
        const wide_root_paths wide_paths = wide_root_paths::compute(*g);
        std::size_t paths = 0;
        for (std::uint32_t v = 0; v < a.graph.size(); v += 7) {
            const auto one = narrow_paths.path_to(v);
            const auto other = wide_paths.path_to(v);
            ASSERT_TRUE(std::equal(one.begin(), one.end(), other.begin(), other.end())) << "node " << v;
            const auto several = paths_from_roots(a.graph, v, 3);
            const auto wide_several = paths_from_roots(*g, v, 3);
            ASSERT_EQ(wide_several.size(), several.size()) << "node " << v;
            for (std::size_t i = 0; i < several.size(); ++i)
                ASSERT_TRUE(
                    std::equal(several[i].begin(), several[i].end(), wide_several[i].begin(), wide_several[i].end()));
            paths += several.size();
        }
        EXPECT_GT(paths, 10u) << "seed " << seed;
    }
}

TEST(dominator_tree, weak_referents_are_retained_by_nobody) {
    random_heap heap(40, 7, 0.0);  // no strong links at all: each node lives only if it is a root
    analyzed a(heap.b);
    for (std::size_t i = 0; i < 40; ++i) {
        std::uint32_t v = a.graph.node_of(random_heap::id_of(i));
        bool root = std::find(heap.roots.begin(), heap.roots.end(), random_heap::id_of(i)) != heap.roots.end();
        EXPECT_EQ(a.dom.reachable(v), root) << i;
        if (root) {
            EXPECT_EQ(a.dom.idom(v), dominator_tree::virtual_root);
        }
    }
}

TEST(dominator_tree, a_long_chain_needs_no_recursion) {
    // One root, then a chain of 300,000 nodes: retained sizes fall by one node's size per step.
    // The second half is written first, so ids arrive in two ascending runs to be merged.
    hprof_builder b(8);
    b.utf8(0x901, "java/lang/Object").load_class(1, object_class, 0, 0x901);
    b.utf8(0x902, "demo/Node").load_class(2, node_class, 0, 0x902);
    b.utf8(0x801, "next");
    b.begin_segment();
    b.class_dump(object_class, 0, {});
    b.class_dump(node_class, object_class, {{0x801, t_object}});
    const std::size_t n = 300000;
    for (std::size_t k = 0; k < n; ++k) {
        std::size_t i = (k + n / 2) % n;
        b.instance(0x100000 + i * 16, node_class, values(8).id(i + 1 < n ? 0x100000 + (i + 1) * 16 : 0).bytes());
    }
    b.root_jni_global(0x100000, 0);
    b.end_segment();
    analyzed a(b);
    std::uint32_t head = a.graph.node_of(0x100000), tail = a.graph.node_of(0x100000 + (n - 1) * 16);
    const std::uint64_t node_bytes = a.graph.shallow_size(head);
    EXPECT_EQ(node_bytes, 16u);  // 12-byte header + a compressed reference
    EXPECT_EQ(a.dom.retained(head), n * node_bytes);
    EXPECT_EQ(a.dom.retained(tail), node_bytes);
    EXPECT_EQ(a.dom.idom(tail), a.graph.node_of(0x100000 + (n - 2) * 16));
    EXPECT_EQ(a.dom.unreachable_count(), 2u);  // the two class objects: no root holds them here
    for (std::size_t i = 0; i + 1 < a.graph.size(); ++i) ASSERT_LT(a.graph.id(i), a.graph.id(i + 1));
    for (std::uint64_t absent : {std::uint64_t{0}, std::uint64_t{0x100008}, ~std::uint64_t{0}, ~std::uint64_t{0} - 7})
        EXPECT_EQ(a.graph.node_of(absent), object_graph::no_node) << absent;
    for (std::size_t i = 0; i < n; i += 997)
        EXPECT_EQ(a.graph.id(a.graph.node_of(0x100000 + i * 16)), 0x100000 + i * 16);
}

}  // namespace
}  // namespace heapd
