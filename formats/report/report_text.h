#pragma once
// The analysis report for people: a header with the dump's facts and aligned tables.
#include <string>

#include "formats/report/quantities.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace report {

// Formatting choices for the text report.
struct text_options {
    // Which parts after the header: all by default; `heapctl histo` and `threads` pick one.
    enum section : unsigned {
        suspects = 1,
        retention = 2,
        histogram = 4,
        largest = 8,
        waste = 16,
        threads = 32,
        legacy = 64,
        off_heap = 128,
        all = 255
    };
    unsigned top = 20;         // rows per table (0: all)
    unsigned max_frames = 32;  // frames shown per thread (0: all)
    unsigned sections = all;   // a set of section bits
    std::string title = {};    // the first line; "heapd analyze: FILE" when empty
};

// The whole report as text, lines under 100 columns where the data allows.
std::string render_text(const analysis_report& r, const text_options& options);

// The off-heap section: direct buffers, threads by name and stack, class loaders, and who holds
// each, top rows of each list (0: all). (formats/report/off_heap_text.cpp)
void off_heap_text(std::string& out, const analysis_report& r, unsigned top);
// A path from a GC root on one line: "class Sessions (static LEAK) → java.util.ArrayList.elementData
// → java.lang.Object[12] → Sessions$Session", folded chains as "Node.next ×999".
std::string path_text(const gc_path& path);

// `heapd path`'s answer for people: the object, then one numbered path per root.
std::string render_text(const object_paths_report& r);

// A diff as text: both heaps' totals, a headline naming the class that grew most, then the classes
// that grew and those that shrank (options.top rows each).
std::string render_text(const diff_report& r, const text_options& options);

}  // namespace report
}  // namespace heapd
