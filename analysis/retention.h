#pragma once
// Summaries of a dominator tree for the report: the biggest retainers and retention by class.
#include "analysis/dominator_tree.h"
#include "analysis/heap_focus.h"
#include "analysis/object_graph.h"
#include "formats/hprof/class_table.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace analysis {

// The top objects by retained size, and per class the bytes its instances retain together: an
// instance counts unless a dominator above it is of the same class, so nesting is counted once.
// Class objects are named "class NAME" from classes. top retainers and class_rows classes are kept
// (0: all). With a focus (Android), only its heap's objects are listed, with what they keep of it.
template <typename Node>
retention_report summarize_retention(const basic_object_graph<Node>& g, const basic_dominator_tree<Node>& d,
                                     const typename basic_dominator_tree<Node>::children_index& children,
                                     const class_table& classes, unsigned top, unsigned class_rows,
                                     const heap_focus* focus = nullptr);

}  // namespace analysis
}  // namespace heapd
