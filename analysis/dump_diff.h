#pragma once
// `heapd diff`: the change per class between two analyses of dumps of the same JVM.
//
// Classes are matched by name (class ids differ between dumps; primitive arrays are "byte[]" and so
// on; classes of one name from several loaders are added together). The order is by growth:
//   1. shallow bytes growth, then instance count growth, then retained bytes growth, then name.
// Shallow growth comes first because it is additive: each new byte belongs to exactly one class, so
// the rows share out the heap's growth and the objects that pile up rank first. Retained growth
// counts the same bytes again in every class on the path that holds them (the collection, its
// backing array, the class whose static field holds it), so ranking by it would put holders such as
// java.lang.Class first on every leak; it is reported beside the shallow growth instead.
// A class grew when the first non-zero of those three deltas is positive, shrank when negative;
// classes with no change at all are only counted.
#include <string>

#include "analysis/analysis.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace analysis {

// What analyze_dump must keep for a diff: every histogram row and every class's retained size
// (largest = 0 keeps summarize_retention from cutting retained_by_class), no threads.
analysis_options diff_analysis_options(const std::string& file_name, bool retained);

// The change from before to after; grew and shrank each cut to top rows (0: all). Both reports
// should come from analyze_dump with diff_analysis_options; retained sizes are compared only when
// both have them.
diff_report diff_analyses(const analysis_report& before, const analysis_report& after, unsigned top);

}  // namespace analysis
}  // namespace heapd
