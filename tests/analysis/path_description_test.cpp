// Paths described with field names, array indices and statics, read back from the records.
#include "analysis/path_description.h"

#include <gtest/gtest.h>

#include "analysis/root_paths.h"
#include "formats/report/report_text.h"
#include "support/shaped_heap.h"

namespace heapd {
namespace {

using test::analyzed;
using test::shaped_heap;

TEST(path_description, names_statics_fields_and_array_indices) {
    shaped_heap h;
    analyzed a(h.b);
    const object_graph& g = a.graph;
    root_paths p = root_paths::compute(g);
    gc_path path = describe_path(g, a.classes, p.path_to(g.node_of(h.payloads[12])));
    ASSERT_EQ(path.steps.size(), 5u);
    EXPECT_EQ(path.root_kinds, std::vector<std::string>{"sticky_class"});
    EXPECT_EQ(path.length, 4u);
    EXPECT_EQ(path.steps[0].class_name, "class Holder");
    EXPECT_TRUE(path.steps[0].is_class);
    EXPECT_EQ(path.steps[0].field, "static LEAK");
    EXPECT_EQ(path.steps[1].field, "elementData");
    EXPECT_EQ(path.steps[2].field, "[12]");
    EXPECT_EQ(path.steps[3].field, "payload");
    EXPECT_EQ(path.steps[4].field, "");
    EXPECT_EQ(path.steps[4].id, h.payloads[12]);
    EXPECT_EQ(path_text(path),
              "(sticky_class root) class Holder (static LEAK) \u2192 java.util.ArrayList.elementData "
              "\u2192 java.lang.Object[12] \u2192 Holder$Session.payload \u2192 byte[]");
}

TEST(path_description, inherited_fields_are_found_past_the_subclass_fields) {
    shaped_heap h;
    analyzed a(h.b);
    const object_graph& g = a.graph;
    gc_path path = describe_path(g, a.classes, root_paths::compute(g).path_to(g.node_of(shaped_heap::derived_held_id)));
    ASSERT_EQ(path.steps.size(), 2u);
    EXPECT_EQ(path.root_kinds, std::vector<std::string>{"jni_global"});
    EXPECT_EQ(path_text(path), "(jni_global root) Derived.owner \u2192 byte[]");
}

TEST(path_description, a_chain_folds_into_one_step_with_its_length) {
    shaped_heap h(10, 10, 1000, 0, 0);
    analyzed a(h.b);
    const object_graph& g = a.graph;
    gc_path path = describe_path(g, a.classes, root_paths::compute(g).path_to(g.node_of(h.nodes.back())));
    ASSERT_EQ(path.steps.size(), 3u);
    EXPECT_EQ(path.length, 1000u);
    EXPECT_EQ(path.steps[1].repeat, 999u);
    EXPECT_EQ(path.steps[1].id, h.nodes.front());
    EXPECT_EQ(path_text(path),
              "(sticky_class root) class Holder (static CHAIN) \u2192 Holder$Node.next \u00d7999 \u2192 Holder$Node");
}

TEST(path_description, multi_dimensional_arrays_index_the_outer_dimension) {
    gc_path p;
    p.steps = {{1, "java.lang.Object[][]", false, "[3]", 1}, {2, "java.lang.Object[]", false, "", 1}};
    EXPECT_EQ(path_text(p), "java.lang.Object[3][] \u2192 java.lang.Object[]");
    EXPECT_EQ(path_text(gc_path{}), "unreachable");
}

}  // namespace
}  // namespace heapd
