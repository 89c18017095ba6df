#pragma once
// The analysis report as JSON, both ways: heapd writes it, heapctl and scripts read it.
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace report {

// The report as a JSON object (keys kept in the order written) with summary, histogram, largest_objects, threads,
// legacy and problems.
nlohmann::ordered_json to_json(const analysis_report& r);

// A path from a GC root: root kinds, length, steps and the one-line text form.
nlohmann::ordered_json path_json(const gc_path& path);

// A path back from path_json (its text is not read); throws nlohmann's exceptions on a missing key.
gc_path path_from_json(const nlohmann::ordered_json& j);
// The retention parts of a report (reachability, leak suspects, watched objects, dominators,
// retained by class, the tree) into out, and back: reading throws nlohmann's exceptions on a missing
// key or a wrong type, and fails with bad_value on a bad tree. (formats/report/retention_json.cpp)
void retention_json(const retention_report& t, nlohmann::ordered_json& out);
result<void> retention_from_json(const nlohmann::ordered_json& j, retention_report& t);
// The off-heap report (direct buffers, threads, class loaders), and back; reading throws nlohmann's
// exceptions on a missing key or a wrong type. (formats/report/off_heap_json.cpp)
nlohmann::ordered_json off_heap_json(const off_heap_report& r);
void off_heap_from_json(const nlohmann::ordered_json& j, off_heap_report& r);
// `heapd path`'s answer: the object, whether it is reachable, and its paths.
nlohmann::ordered_json to_json(const object_paths_report& r);

// Reads `heapd path`'s answer back; fails with bad_value as report_from_json does.
result<object_paths_report> paths_from_json(const nlohmann::ordered_json& j);

// Reads a report back; fails with bad_value when a required key is missing or of the wrong type,
// or when a number is written as a float no whole field can take (beyond 2^63).
result<analysis_report> report_from_json(const nlohmann::ordered_json& j);

// The dominator tree outline (retention_report::tree) as {min_share, nodes}, and back; reading fails
// with bad_value when a node's parent is not an earlier object. (formats/report/tree_json.cpp)
nlohmann::ordered_json tree_json(const retention_report& t);
result<void> tree_from_json(const nlohmann::ordered_json& j, retention_report& t);

// A diff as JSON: before and after (heap totals), retained, counts, grew and shrank (one object per
// class with before, after and delta of instances, shallow bytes and retained bytes), notes.
// (formats/report/diff_json.cpp)
nlohmann::ordered_json to_json(const diff_report& r);
// Reads a diff back; fails with bad_value when a required key is missing or of the wrong type.
result<diff_report> diff_from_json(const nlohmann::ordered_json& j);

}  // namespace report
}  // namespace heapd
