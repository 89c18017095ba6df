#pragma once
// The threads grouped as a thread leak shows them: by name pattern, by stack and by state.
#include <string>
#include <string_view>
#include <vector>

#include "formats/report/report.h"

namespace heapd {
inline namespace analysis {

// A thread name with each run of digits written as "#": "pool-3-thread-17" → "pool-#-thread-#".
std::string name_pattern(std::string_view name);

// Counts, states, and the groups by name pattern and by stack (the whole stack compared; its key
// the innermost frame, then " … " and the outermost when there are two or more), each by count descending (ties by
// key), at most max_groups each. Holders are left to find_off_heap (they need the object graph).
thread_summary_report group_threads(const std::vector<thread_report>& threads, unsigned max_groups = 10);

}  // namespace analysis
}  // namespace heapd
