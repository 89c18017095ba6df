// The object graph is the same whatever the number of threads that walk the dump, whether the
// indexes of its references wrap past 32 bits, and whether its node numbers are 32 or 64 bits.
#include "analysis/object_graph.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "formats/hprof/heap_walk.h"
#include "formats/hprof/hprof_reader.h"
#include "support/hprof_builder.h"

namespace heapd {
namespace {

// Graph options with instances referencing their class, as heapd builds them.
graph_options options_of(unsigned threads, unsigned edge_index_bits = 32) {
    graph_options o;
    o.threads = threads;
    o.edge_index_bits = edge_index_bits;
    return o;
}

using test::hprof_builder;
using test::values;

// n objects {a, b} with random links, ids out of order, spread over many segments, with roots
// and primitive arrays in every segment.
hprof_builder segmented_heap(std::size_t n, std::size_t per_segment) {
    hprof_builder b(8);
    constexpr std::uint64_t object_class = 0x100, node_class = 0x101;
    b.utf8(0x901, "java/lang/Object").load_class(1, object_class, 0, 0x901);
    b.utf8(0x902, "demo/Node").load_class(2, node_class, 0, 0x902);
    b.utf8(0x801, "a").utf8(0x802, "b");
    auto id_of = [&](std::size_t i) { return 0x10000 + (i * 7919 % n) * 32; };
    std::mt19937 rng(7);
    std::uniform_int_distribution<std::size_t> pick(0, n - 1);
    b.begin_segment();
    b.class_dump(object_class, 0, {});
    b.class_dump(node_class, object_class, {{0x801, 2}, {0x802, 2}});
    for (std::size_t i = 0; i < n; ++i) {
        if (i % per_segment == 0) b.end_segment().begin_segment();
        b.instance(id_of(i), node_class, values(8).id(id_of(pick(rng))).id(i % 3 ? 0x9000000 + i * 16 : 0).bytes());
        if (i % 3) b.primitive_array(0x9000000 + i * 16, 8, static_cast<std::uint32_t>(i % 50));
        if (i % 11 == 0) b.root_jni_global(id_of(i), 0);
        if (i % 13 == 0) b.root_java_frame(id_of(i), 1, 0);
    }
    b.end_segment();
    return b;
}

// A node number as the same number in 64 bits, and no_node as 64-bit no_node.
template <typename Node>
std::uint64_t wide(Node v) {
    return v == basic_object_graph<Node>::no_node ? wide_object_graph::no_node : v;
}

// Every node the same in both graphs (of the same or of different node types): ids, offsets,
// classes, sizes, references (no_node for ids the dump lacks, in both), roots.
template <typename One, typename Other>
void expect_same_graph(const basic_object_graph<One>& one, const basic_object_graph<Other>& other,
                       const std::string& what) {
    ASSERT_EQ(std::uint64_t{other.size()}, std::uint64_t{one.size()}) << what;
    ASSERT_EQ(other.reference_count(), one.reference_count()) << what;
    EXPECT_TRUE(std::equal(one.roots().begin(), one.roots().end(), other.roots().begin(), other.roots().end())) << what;
    EXPECT_EQ(other.root_kinds(), one.root_kinds()) << what;
    ASSERT_EQ(other.key_count(), one.key_count()) << what;
    for (std::uint32_t k = 0; k < one.key_count(); ++k) EXPECT_EQ(other.key_name(k), one.key_name(k)) << what;
    for (std::uint32_t v = 0; v < one.size(); ++v) {
        ASSERT_EQ(other.id(v), one.id(v)) << what;
        ASSERT_EQ(other.node_of(one.id(v)), v) << what;
        ASSERT_EQ(other.record_offset(v), one.record_offset(v)) << what;
        ASSERT_EQ(other.class_key(v), one.class_key(v)) << what;
        ASSERT_EQ(other.shallow_size(v), one.shallow_size(v)) << what;
        auto a = one.references(v), m = other.references(v);
        ASSERT_TRUE(
            std::equal(a.begin(), a.end(), m.begin(), m.end(), [](One x, Other y) { return wide(x) == wide(y); }))
            << "node " << v << ", " << what;
    }
}

// The census and class table of a dump, for building its graph.
struct prepared {
    explicit prepared(const hprof_builder& b)
        : idx(record_index::build(*hprof_reader::parse(b.span()))), classes(idx), census(take_census(idx, classes)) {}
    static census_result take_census(const record_index& idx, class_table& classes) {
        heap_census census(idx, classes, 0);
        walk_heap(idx, census);
        return census.finish();
    }
    record_index idx;
    class_table classes;
    census_result census;
};

TEST(object_graph, any_thread_count_builds_the_same_graph) {
    hprof_builder b = segmented_heap(20000, 700);
    prepared p(b);
    ASSERT_GT(p.idx.heap_records().size(), 20u);
    auto one = object_graph::build(p.idx, p.classes, p.census, options_of(1));
    ASSERT_TRUE(one.has_value());
    EXPECT_EQ(one->size(), 20000u + 20000u * 2 / 3 + 2);
    for (unsigned threads : {2u, 3u, 8u}) {
        auto many = object_graph::build(p.idx, p.classes, p.census, options_of(threads));
        ASSERT_TRUE(many.has_value());
        expect_same_graph(*one, *many, std::to_string(threads) + " threads");
    }
    // Both root kinds of a node that is a JNI global and a Java frame root are kept.
    std::uint32_t both = one->node_of(0x10000);
    EXPECT_EQ(one->root_kinds_of(both), (1u << static_cast<unsigned>(root_kind::jni_global)) |
                                            (1u << static_cast<unsigned>(root_kind::java_frame)));
}

// Each node keeps the low 32 bits of where its references start; a graph of 2^32 references or
// more notes where those wrap. Forced here on a small graph by keeping fewer bits: the same graph,
// whether they wrap once in a while or at nearly every node.
TEST(object_graph, first_edge_indexes_that_wrap_give_the_same_graph) {
    hprof_builder b = segmented_heap(20000, 700);
    prepared p(b);
    auto plain = object_graph::build(p.idx, p.classes, p.census, options_of(2));
    ASSERT_TRUE(plain.has_value());
    ASSERT_GT(plain->reference_count(), std::uint64_t{1} << 15);
    for (unsigned bits : {15u, 8u, 3u, 1u}) {
        auto narrow = object_graph::build(p.idx, p.classes, p.census, options_of(2, bits));
        ASSERT_TRUE(narrow.has_value());
        expect_same_graph(*plain, *narrow, std::to_string(bits) + " bits");
    }
}

// A heap of 2^32 - 1 objects or more gets 64-bit node numbers: the same graph as with 32-bit ones
// (ids the dump lacks stay no_node). A 32-bit graph refuses a heap at its limit, lowered here.
TEST(object_graph, sixty_four_bit_node_numbers_give_the_same_graph) {
    hprof_builder b = segmented_heap(20000, 700);
    prepared p(b);
    auto narrow = object_graph::build(p.idx, p.classes, p.census, options_of(2));
    ASSERT_TRUE(narrow.has_value());
    auto wide_graph = wide_object_graph::build(p.idx, p.classes, p.census, options_of(2, 8));
    ASSERT_TRUE(wide_graph.has_value());
    expect_same_graph(*narrow, *wide_graph, "64-bit nodes");
    EXPECT_EQ(wide_graph->node_of(0x5), wide_object_graph::no_node);

    graph_options limited = options_of(2);
    limited.narrow_nodes_below = narrow->size();
    auto refused = object_graph::build(p.idx, p.classes, p.census, limited);
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().code, error_code::unsupported);
    EXPECT_EQ(refused.error().message,
              "the heap holds " + std::to_string(narrow->size()) + " objects, too many for 32-bit node numbers");
    limited.narrow_nodes_below = narrow->size() + 1;
    EXPECT_TRUE(object_graph::build(p.idx, p.classes, p.census, limited).has_value());
    // The limit is the 32-bit form's: a 64-bit graph takes any heap.
    limited.narrow_nodes_below = 1;
    EXPECT_TRUE(wide_object_graph::build(p.idx, p.classes, p.census, limited).has_value());
}

}  // namespace
}  // namespace heapd
