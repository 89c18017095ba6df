// Shortest paths from GC roots: forward from all roots, and backwards from one object to several roots.
#include "analysis/root_paths.h"

#include <gtest/gtest.h>

#include "support/shaped_heap.h"

namespace heapd {
namespace {

using test::analyzed;
using test::shaped_heap;

std::vector<std::uint64_t> ids(const object_graph& g, const std::vector<std::uint32_t>& path) {
    std::vector<std::uint64_t> out;
    for (std::uint32_t v : path) out.push_back(g.id(v));
    return out;
}

TEST(root_paths, forward_search_gives_a_shortest_path_root_first) {
    shaped_heap h;
    analyzed a(h.b);
    const object_graph& g = a.graph;
    root_paths p = root_paths::compute(g);
    std::uint32_t payload = g.node_of(h.payloads[3]);
    EXPECT_EQ(ids(g, p.path_to(payload)),
              (std::vector<std::uint64_t>{shaped_heap::holder_class, shaped_heap::list_id, shaped_heap::elements_id,
                                          h.sessions[3], h.payloads[3]}));
    // Session 7 is a root itself: its path is just itself.
    EXPECT_EQ(ids(g, p.path_to(g.node_of(h.sessions[7]))), std::vector<std::uint64_t>{h.sessions[7]});
    // The chain's tail lies 3000 references below the class.
    EXPECT_EQ(p.path_to(g.node_of(h.nodes.back())).size(), 3001u);
    // A weak referent has no strong path.
    EXPECT_FALSE(p.reachable(g.node_of(shaped_heap::weak_referent_id)));
    EXPECT_TRUE(p.path_to(g.node_of(shaped_heap::weak_referent_id)).empty());
}

// A list held by a class's static field and, at the moment of the dump, by a local of the method
// filling it (an OutOfMemoryError dump): its path comes from the static field, though the frame is
// nearer; what only a frame holds still has its path from the frame (the derived object's, below).
TEST(root_paths, lasting_roots_come_before_stack_frames) {
    shaped_heap h;
    h.b.begin_segment();
    h.b.root_java_frame(shaped_heap::elements_id, 1, 0);
    h.b.end_segment();
    analyzed a(h.b);
    const object_graph& g = a.graph;
    root_paths p = root_paths::compute(g);
    EXPECT_EQ(ids(g, p.path_to(g.node_of(h.payloads[3]))),
              (std::vector<std::uint64_t>{shaped_heap::holder_class, shaped_heap::list_id, shaped_heap::elements_id,
                                          h.sessions[3], h.payloads[3]}));
    EXPECT_EQ(ids(g, p.path_to(g.node_of(shaped_heap::elements_id))),
              (std::vector<std::uint64_t>{shaped_heap::holder_class, shaped_heap::list_id, shaped_heap::elements_id}));
}

TEST(root_paths, backward_search_finds_paths_from_different_roots_shortest_first) {
    shaped_heap h;
    analyzed a(h.b);
    const object_graph& g = a.graph;
    auto paths = paths_from_roots(g, g.node_of(h.payloads[7]), 5);
    ASSERT_EQ(paths.size(), 2u);  // the JNI global on session 7, and class Holder
    EXPECT_EQ(ids(g, paths[0]), (std::vector<std::uint64_t>{h.sessions[7], h.payloads[7]}));
    EXPECT_EQ(ids(g, paths[1]), (std::vector<std::uint64_t>{shaped_heap::holder_class, shaped_heap::list_id,
                                                            shaped_heap::elements_id, h.sessions[7], h.payloads[7]}));
    EXPECT_EQ(paths_from_roots(g, g.node_of(h.payloads[7]), 1).size(), 1u);
    EXPECT_TRUE(paths_from_roots(g, g.node_of(shaped_heap::weak_referent_id), 3).empty());
    // A root's own path is itself.
    auto self = paths_from_roots(g, g.node_of(shaped_heap::derived_id), 1);
    ASSERT_EQ(self.size(), 1u);
    EXPECT_EQ(ids(g, self[0]), std::vector<std::uint64_t>{shaped_heap::derived_id});
}

TEST(root_paths, long_chains_need_no_recursion) {
    shaped_heap h(10, 10, 300000, 0, 0);
    analyzed a(h.b);
    const object_graph& g = a.graph;
    auto back = paths_from_roots(g, g.node_of(h.nodes.back()), 2);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].size(), 300001u);
    EXPECT_EQ(root_paths::compute(g).path_to(g.node_of(h.nodes.back())), back[0]);
}

TEST(root_paths, root_kinds_are_kept_per_root) {
    shaped_heap h;
    analyzed a(h.b);
    const object_graph& g = a.graph;
    EXPECT_EQ(g.root_kinds_of(g.node_of(shaped_heap::holder_class)),
              1u << static_cast<unsigned>(root_kind::sticky_class));
    EXPECT_EQ(g.root_kinds_of(g.node_of(h.blobs[0])), 1u << static_cast<unsigned>(root_kind::jni_global));
    EXPECT_EQ(g.root_kinds_of(g.node_of(h.sessions[0])), 0u);
}

}  // namespace
}  // namespace heapd
