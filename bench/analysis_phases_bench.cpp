// analysis_phases_bench: times each phase of the full analysis (index, census, object graph,
// dominator tree, retention summary, root paths, leak suspects) on one HPROF file and prints the
// process's resident memory after each, to show where time and memory go.
//
//   analysis_phases_bench FILE
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "formats/analysis/census.h"
#include "formats/analysis/dominator_tree.h"
#include "formats/analysis/gc_paths.h"
#include "formats/analysis/leak_suspects.h"
#include "formats/analysis/object_graph.h"
#include "formats/analysis/retention.h"
#include "formats/hprof/class_table.h"
#include "formats/hprof/heap_walk.h"
#include "formats/hprof/hprof_reader.h"
#include "formats/hprof/mapped_file.h"
#include "formats/hprof/record_index.h"

using namespace heapd;

namespace {

using clock_type = std::chrono::steady_clock;

// VmRSS and VmHWM of this process in MB (10^6 bytes).
std::pair<double, double> rss_mb() {
    std::ifstream in("/proc/self/status");
    double rss = 0, hwm = 0;
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("VmRSS:")) rss = std::strtod(line.c_str() + 6, nullptr) * 1024 / 1e6;
        if (line.starts_with("VmHWM:")) hwm = std::strtod(line.c_str() + 6, nullptr) * 1024 / 1e6;
    }
    return {rss, hwm};
}

// Prints one phase: its time, the time so far, and memory.
struct phase_clock {
    clock_type::time_point start = clock_type::now(), last = start;
    void mark(const char* name) {
        auto now = clock_type::now();
        auto [rss, hwm] = rss_mb();
        std::printf("%-18s %7.3f s  (total %7.3f s)  rss %7.0f MB  peak %7.0f MB\n", name,
                    std::chrono::duration<double>(now - last).count(),
                    std::chrono::duration<double>(now - start).count(), rss, hwm);
        last = now;
    }
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: analysis_phases_bench FILE\n");
        return 1;
    }
    phase_clock clock;
    auto file = mapped_file::open(argv[1]);
    if (!file) {
        std::fprintf(stderr, "%s\n", file.error().describe().c_str());
        return 2;
    }
    auto reader = hprof_reader::parse(file->bytes());
    if (!reader) {
        std::fprintf(stderr, "%s\n", reader.error().describe().c_str());
        return 2;
    }
    record_index idx = record_index::build(*reader);
    class_table classes(idx);
    clock.mark("index");
    heap_census census(idx, classes, 20);
    walk_heap(idx, census);
    census_result c = census.finish();
    clock.mark("census");
    auto graph = object_graph::build(idx, classes, c);
    if (!graph) {
        std::fprintf(stderr, "%s\n", graph.error().describe().c_str());
        return 2;
    }
    clock.mark("object graph");
    dominator_tree dom = dominator_tree::compute(*graph);
    clock.mark("dominator tree");
    auto children = dom.children();
    retention_report r = summarize_retention(*graph, dom, children, classes, 20, 20);
    clock.mark("retention");
    root_paths paths = root_paths::compute(*graph);
    clock.mark("root paths");
    auto suspects = find_leak_suspects(*graph, dom, children, classes, paths);
    clock.mark("leak suspects");
    std::printf("%u nodes, %llu references, %zu suspects, file %.0f MB\n", graph->size(),
                static_cast<unsigned long long>(graph->reference_count()), suspects.size(),
                static_cast<double>(file->bytes().size()) / 1e6);
    return 0;
}
