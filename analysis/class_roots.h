#pragma once
// Classes taken as GC roots in dumps that mark none: the serviceability agent (`jhsdb jmap
// --binaryheap`, the way to dump a JVM that cannot answer) writes no sticky-class roots, so the
// classes' statics would be reached only through their class loaders, and the application class
// loader would be named as what holds every leak.
#include <cstdint>
#include <vector>

#include "analysis/census.h"
#include "formats/hprof/class_table.h"
#include "formats/hprof/record_index.h"

namespace heapd {
inline namespace analysis {

// When the dump has no sticky-class root and has classes: the classes of the bootstrap loader and
// of the JDK's own platform (extension) and application loaders, which a running JVM never unloads,
// as HotSpot's own heap dumper would mark them. Empty otherwise. One walk over the heap to find the
// loaders' classes; memory: a few bytes per class.
std::vector<std::uint64_t> inferred_class_roots(const record_index& idx, const class_table& classes,
                                                const census_result& census);

}  // namespace analysis
}  // namespace heapd
