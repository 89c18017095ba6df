// Tests of Android's heaps on a synthetic dump: each heap's objects and bytes, each class's
// instances per heap, and suspects and retainers of the app heap only unless every heap is asked for.
#include "analysis/heap_focus.h"

#include <gtest/gtest.h>

#include <string>

#include "analysis/analysis.h"
#include "formats/report/report_json.h"
#include "formats/report/report_text.h"
#include "support/hprof_builder.h"

namespace heapd {
namespace {

using test::hprof_builder;
using test::values;

constexpr std::uint8_t t_object = 2, t_byte = 8;
constexpr std::uint64_t object_class = 0x100, preloads_class = 0x101, app_class = 0x102, array_class = 0x103;

// The zygote heap: a framework class whose static holds 40,000 bytes of preloaded data. The app
// heap: one AppCache object (a JNI global root) whose array holds four 2,000-byte arrays.
hprof_builder android_dump() {
    hprof_builder b(4, "JAVA PROFILE 1.0.3");
    b.utf8(1, "java.lang.Object").load_class(1, object_class, 0, 1);
    b.utf8(2, "android.content.res.Preloads").load_class(2, preloads_class, 0, 2);
    b.utf8(3, "com.example.AppCache").load_class(3, app_class, 0, 3);
    b.utf8(4, "java.lang.Object[]").load_class(4, array_class, 0, 4);
    b.utf8(5, "zygote").utf8(6, "app").utf8(7, "drawables").utf8(8, "entries");
    b.begin_segment();
    b.heap_dump_info(0x5A, 5);
    b.class_dump(object_class, 0, {});
    b.class_dump(preloads_class, object_class, {}, {{7, t_object, values(4).id(0x2000).bytes()}});
    b.class_dump(array_class, object_class, {});
    b.root_sticky_class(object_class).root_sticky_class(preloads_class).root_sticky_class(array_class);
    b.primitive_array(0x2000, t_byte, 40000);
    b.heap_dump_info(0x41, 6);
    b.class_dump(app_class, object_class, {{8, t_object}});
    b.root_sticky_class(app_class).root_jni_global(0x3000, 0x77);
    b.instance(0x3000, app_class, values(4).id(0x3100).bytes());
    b.object_array(0x3100, array_class, {0x3200, 0x3300, 0x3400, 0x3500});
    for (std::uint64_t id : {0x3200, 0x3300, 0x3400, 0x3500}) b.primitive_array(id, t_byte, 2000);
    b.end_segment();
    b.heap_dump_end();
    return b;
}

analysis_report analyze(const std::string& heap) {
    analysis_options o;
    o.heap = heap;
    auto r = analyze_dump(android_dump().span(), o);
    EXPECT_TRUE(r.has_value()) << r.error().describe();
    return r ? *r : analysis_report{};
}

TEST(heap_focus, the_summary_lists_each_heap_and_rows_count_per_heap) {
    const analysis_report r = analyze("");
    ASSERT_EQ(r.summary.heaps.size(), 2u);
    EXPECT_EQ(r.summary.heaps[0].name, "zygote");
    EXPECT_EQ(r.summary.heaps[1].name, "app");
    EXPECT_EQ(r.summary.heaps[0].objects, 3u + 1);  // three classes, one array
    EXPECT_EQ(r.summary.heaps[1].objects, 1u + 6);  // one class, an instance, five arrays
    EXPECT_EQ(r.summary.heaps[0].objects + r.summary.heaps[1].objects,
              r.summary.instances + r.summary.object_arrays + r.summary.primitive_arrays + r.summary.classes);
    EXPECT_EQ(r.summary.heaps[0].shallow_bytes + r.summary.heaps[1].shallow_bytes, r.summary.shallow_bytes);
    EXPECT_GE(r.summary.heaps[0].shallow_bytes, 40000u);
    for (const histogram_entry& e : r.histogram)
        if (e.class_name == "byte[]") {
            EXPECT_EQ(e.heap_instances, (std::vector<std::uint64_t>{1, 4}));
        }
    // Read back from JSON as written, as heapctl does, and shown.
    auto back = report_from_json(to_json(r));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->summary.heaps.size(), 2u);
    EXPECT_EQ(back->summary.heap_focus, "app");
    const std::string text = render_text(*back, {});
    EXPECT_NE(text.find("  Heaps    zygote "), std::string::npos) << text;
    EXPECT_NE(text.find("app heap's, the others' objects given"), std::string::npos) << text;
}

TEST(heap_focus, suspects_and_retainers_are_the_app_heaps_by_default) {
    const analysis_report r = analyze("");
    EXPECT_EQ(r.summary.heap_focus, "app");
    ASSERT_FALSE(r.retention.leak_suspects.empty());
    // The app's cache, not the framework's 40,000 preloaded bytes, though they are ten times more.
    EXPECT_EQ(r.retention.leak_suspects[0].suspect.class_name, "com.example.AppCache");
    for (const leak_suspect& s : r.retention.leak_suspects) EXPECT_NE(s.suspect.id, 0x2000u);
    for (const dominator_entry& d : r.retention.dominators) EXPECT_NE(d.id, 0x2000u);
    EXPECT_EQ(r.retention.focus_bytes, r.summary.heaps[1].shallow_bytes);
    EXPECT_LE(r.retention.leak_suspects[0].share, 1.0);
}

TEST(heap_focus, every_heap_when_asked) {
    const analysis_report r = analyze("all");
    EXPECT_EQ(r.summary.heap_focus, "");
    EXPECT_EQ(r.retention.focus_bytes, 0u);
    ASSERT_FALSE(r.retention.dominators.empty());
    EXPECT_EQ(r.retention.dominators[0].id, preloads_class);  // its static holds the preloaded array
    ASSERT_FALSE(r.retention.leak_suspects.empty());
    EXPECT_EQ(r.retention.leak_suspects[0].accumulation.id, 0x2000u);
}

}  // namespace
}  // namespace heapd
