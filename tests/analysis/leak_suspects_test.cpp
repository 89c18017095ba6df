// Leak suspects on a dump with known shapes: a static list, a chain, and many small rooted blobs.
#include "analysis/leak_suspects.h"

#include <gtest/gtest.h>

#include "formats/report/report_text.h"
#include "support/shaped_heap.h"

namespace heapd {
namespace {

using test::analyzed;
using test::shaped_heap;

std::vector<leak_suspect> suspects_of(const analyzed& a, const suspect_options& o = {}) {
    return find_leak_suspects(a.graph, a.dom, a.dom.children(), a.classes, root_paths::compute(a.graph), o);
}

const leak_suspect* find(const std::vector<leak_suspect>& s, const std::string& cls) {
    for (const auto& x : s)
        if (x.suspect.class_name == cls) return &x;
    return nullptr;
}

TEST(leak_suspects, a_static_list_a_chain_and_a_class_of_many_small_objects) {
    shaped_heap h;
    analyzed a(h.b);
    auto s = suspects_of(a);
    ASSERT_EQ(s.size(), 3u);
    for (std::size_t i = 1; i < s.size(); ++i) EXPECT_GE(s[i - 1].retained_bytes, s[i].retained_bytes);

    const leak_suspect* list = find(s, "java.util.ArrayList");
    ASSERT_NE(list, nullptr);
    EXPECT_FALSE(list->is_class);
    EXPECT_EQ(list->suspect.id, shaped_heap::list_id);
    EXPECT_EQ(list->retained_bytes, a.dom.retained(a.graph.node_of(shaped_heap::list_id)));
    EXPECT_EQ(list->accumulation.id, shaped_heap::elements_id);
    EXPECT_EQ(list->chain_length, 1u);
    // Session 7 is also held by its own root, so the array dominates 99 sessions.
    ASSERT_FALSE(list->accumulated.empty());
    EXPECT_EQ(list->accumulated[0].class_name, "Holder$Session");
    EXPECT_EQ(list->accumulated[0].count, 99u);
    EXPECT_EQ(path_text(list->path),
              "(sticky_class root) class Holder (static LEAK) \u2192 java.util.ArrayList.elementData \u2192 "
              "java.lang.Object[]");
    EXPECT_NEAR(list->share, static_cast<double>(list->retained_bytes) / static_cast<double>(a.dom.reachable_bytes()),
                1e-12);

    const leak_suspect* chain = find(s, "Holder$Node");
    ASSERT_NE(chain, nullptr);
    EXPECT_EQ(chain->suspect.id, h.nodes.front());
    EXPECT_EQ(chain->accumulation.id, h.nodes.front());  // a chain accumulates at its head
    EXPECT_EQ(chain->chain_length, 3000u);
    EXPECT_EQ(path_text(chain->path), "(sticky_class root) class Holder (static CHAIN) \u2192 Holder$Node");

    const leak_suspect* blobs = find(s, "Blob");
    ASSERT_NE(blobs, nullptr);
    EXPECT_TRUE(blobs->is_class);
    EXPECT_EQ(blobs->instances, 200u);
    EXPECT_EQ(blobs->retained_bytes, 200 * a.dom.retained(a.graph.node_of(h.blobs[0])));
    ASSERT_EQ(blobs->held_by.size(), 1u);
    EXPECT_EQ(blobs->held_by[0].class_name, "<GC roots>");
    EXPECT_EQ(blobs->held_by[0].count, 200u);
}

TEST(leak_suspects, the_threshold_decides_and_classes_are_not_counted_twice) {
    shaped_heap h;
    analyzed a(h.b);
    suspect_options high;
    high.threshold = 0.9;
    EXPECT_TRUE(suspects_of(a, high).empty());
    // Sessions are all inside the list suspect: Holder$Session and byte[] are no class suspects,
    // and java.lang.Class (Holder) does not count the list and chain it holds again.
    suspect_options low;
    low.threshold = 0.01;
    for (const auto& s : suspects_of(a, low)) {
        if (!s.is_class) continue;
        EXPECT_NE(s.suspect.class_name, "Holder$Session");
        EXPECT_NE(s.suspect.class_name, "java.lang.Class");
    }
}

TEST(leak_suspects, a_class_object_gives_way_to_each_big_static) {
    shaped_heap h(100, 2000, 3000, 0, 0);
    analyzed a(h.b);
    auto s = suspects_of(a);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].suspect.class_name, "java.util.ArrayList");
    EXPECT_EQ(s[1].suspect.class_name, "Holder$Node");
}

TEST(leak_suspects, an_empty_heap_has_none) {
    test::hprof_builder b(8);
    b.begin_segment().end_segment();
    analyzed a(b);
    EXPECT_TRUE(suspects_of(a).empty());
}

}  // namespace
}  // namespace heapd
