#pragma once
// Reports with every name and value that came from a dump or a JVM (classes, fields, threads,
// frames, strings, files, versions) made to stay on its line (base/safe_text.h's line_safe): the
// text renderers print these copies, so a class named with a newline cannot start a line of its
// own in a table, nor a bidirectional control reorder one. JSON keeps the names as they are.
#include "formats/report/report.h"

namespace heapd {
inline namespace report {

analysis_report line_safe_copy(analysis_report r);
diff_report line_safe_copy(diff_report r);
object_paths_report line_safe_copy(object_paths_report r);

}  // namespace report
}  // namespace heapd
