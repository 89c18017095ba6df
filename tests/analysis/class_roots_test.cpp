// Which classes are taken as GC roots in a dump that marks none: those of the bootstrap loader and
// of the JDK's own loaders, not those of other loaders; none when the dump marks sticky classes.
#include "analysis/class_roots.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "formats/hprof/heap_walk.h"
#include "formats/hprof/hprof_reader.h"
#include "support/hprof_builder.h"

namespace heapd {
namespace {

using test::hprof_builder;

// A boot class, the JDK's application loader (JDK 9 and later) with a class it loaded, and a
// custom loader with a class it loaded; with a sticky-class root when sticky is set.
hprof_builder loaders_dump(bool sticky) {
    hprof_builder b(8);
    b.utf8(1, "java/lang/Object").utf8(2, "jdk/internal/loader/ClassLoaders$AppClassLoader");
    b.utf8(3, "com/example/Main").utf8(4, "com/example/PluginLoader").utf8(5, "com/example/Plugin");
    b.load_class(1, 0x100, 0, 1).load_class(2, 0x300, 0, 2).load_class(3, 0x200, 0, 3);
    b.load_class(4, 0x500, 0, 4).load_class(5, 0x400, 0, 5);
    b.begin_segment();
    if (sticky) b.root_sticky_class(0x100);
    b.class_dump(0x100, 0, {});
    b.class_dump(0x300, 0x100, {});
    b.class_dump(0x500, 0x100, {});
    test::class_spec main;
    main.class_id = 0x200;
    main.super_id = 0x100;
    main.loader_id = 0x5000;
    b.class_dump(main);
    test::class_spec plugin;
    plugin.class_id = 0x400;
    plugin.super_id = 0x100;
    plugin.loader_id = 0x6000;
    b.class_dump(plugin);
    b.instance(0x5000, 0x300, {});
    b.instance(0x6000, 0x500, {});
    b.end_segment();
    return b;
}

std::vector<std::uint64_t> inferred(const hprof_builder& b) {
    auto reader = hprof_reader::parse(b.span());
    EXPECT_TRUE(reader.has_value());
    record_index idx = record_index::build(*reader);
    class_table classes(idx);
    heap_census census(idx, classes, 0);
    walk_heap(idx, census);
    std::vector<std::uint64_t> out = inferred_class_roots(idx, classes, census.finish());
    std::sort(out.begin(), out.end());
    return out;
}

TEST(inferred_class_roots, classes_of_the_boot_and_jdk_loaders_when_the_dump_marks_none) {
    const hprof_builder b = loaders_dump(false);
    // Object, the loader classes (boot), Main (application loader); not Plugin (its own loader).
    EXPECT_EQ(inferred(b), (std::vector<std::uint64_t>{0x100, 0x200, 0x300, 0x500}));
}

TEST(inferred_class_roots, none_when_the_dump_marks_sticky_classes) {
    const hprof_builder b = loaders_dump(true);
    EXPECT_TRUE(inferred(b).empty());
}

}  // namespace
}  // namespace heapd
