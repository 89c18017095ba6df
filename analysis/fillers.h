#pragma once
// G1's filler objects (JDK 19 and later): dead space the collector formats as int[] arrays, which
// the dumper writes as any int[] (jcmd's histogram calls them jdk.internal.vm.FillerElement[]).
// Told apart as the int[] of even length (a filler's payload is whole 8-byte words) that no strong
// reference reaches, in a dump whose JVM has jdk.internal.vm.FillerObject; dead int[] of even
// length that a collector has not yet freed cannot be told from them and count with them.
#include <cstdint>

#include "analysis/dominator_tree.h"
#include "analysis/object_graph.h"
#include "formats/hprof/class_table.h"
#include "formats/hprof/record_index.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace analysis {

// The filler objects of a dump, and those of them whose contents are all zeros (the waste report's
// arrays of zeros counted them).
struct filler_counts {
    std::uint64_t objects = 0, bytes = 0;
    std::uint64_t zero_objects = 0, zero_bytes = 0;
};

// The name jcmd's GC.class_histogram gives G1's filler arrays.
inline constexpr std::string_view filler_array_name = "jdk.internal.vm.FillerElement[]";

// Finds the fillers among the unreachable int[] nodes (reads only their records).
template <typename Node>
filler_counts find_fillers(const record_index& idx, const class_table& classes, const basic_object_graph<Node>& g,
                           const basic_dominator_tree<Node>& d);

// Sets the fillers apart in a finished report: out of the int[] row of the histogram into a row of
// their own, out of the waste report's arrays of zeros, and counted in the reachability summary.
void set_fillers_apart(analysis_report& r, const filler_counts& f);

}  // namespace analysis
}  // namespace heapd
