#pragma once
// LeakCanary's evidence in an Android dump: the objects an app gave it to watch (each held by a
// KeyedWeakReference with a key and a description) that are still in the heap, though the app
// said they should be gone. They are the app's own leaks, reported before any suspect. Memory: a
// few hundred bytes per KeyedWeakReference; nothing for a dump without them.
#include <vector>

#include "analysis/dominator_tree.h"
#include "analysis/object_graph.h"
#include "formats/hprof/class_table.h"
#include "formats/hprof/record_index.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace analysis {

// The watched objects still in the heap, reachable ones first, then by retained bytes.
template <typename Node>
std::vector<watched_object> find_watched_objects(const record_index& idx, const class_table& classes,
                                                 const basic_object_graph<Node>& g,
                                                 const basic_dominator_tree<Node>& d);

}  // namespace analysis
}  // namespace heapd
