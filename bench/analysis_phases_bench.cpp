// analysis_phases_bench: times each phase of the full analysis (index, census, object graph,
// dominator tree, retention summary, root paths, leak suspects, threads, off-heap) on one HPROF file and prints the
// process's memory in each, to show where time and memory go: anonymous memory (RssAnon, what the
// analysis allocates; sampled every 5 ms, so a phase's peak is seen, not only its end) apart from
// the dump's file pages (RssFile, which the kernel can drop and read again).
//
//   analysis_phases_bench [--wide] FILE
//
// --wide numbers the nodes in 64 bits, as for a heap of 2^32 - 1 objects or more.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "analysis/census.h"
#include "analysis/dominator_tree.h"
#include "analysis/leak_suspects.h"
#include "analysis/object_graph.h"
#include "analysis/off_heap.h"
#include "analysis/retention.h"
#include "analysis/root_paths.h"
#include "analysis/threads.h"
#include "formats/hprof/class_table.h"
#include "formats/hprof/heap_walk.h"
#include "formats/hprof/hprof_reader.h"
#include "formats/hprof/mapped_file.h"
#include "formats/hprof/record_index.h"

using namespace heapd;

namespace {

using clock_type = std::chrono::steady_clock;

// RssAnon and RssFile of this process in bytes.
std::pair<std::uint64_t, std::uint64_t> rss_bytes() {
    std::ifstream in("/proc/self/status");
    std::uint64_t anon = 0, file = 0;
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("RssAnon:")) anon = std::strtoull(line.c_str() + 8, nullptr, 10) * 1024;
        if (line.starts_with("RssFile:")) file = std::strtoull(line.c_str() + 8, nullptr, 10) * 1024;
    }
    return {anon, file};
}

// Samples RssAnon in the background: the highest value since the last take_peak(), and overall.
class anon_sampler {
public:
    anon_sampler()
        : thread_([this] {
              while (!stop_) {
                  const std::uint64_t a = rss_bytes().first;
                  for (auto* p : {&phase_peak_, &peak_}) {
                      std::uint64_t seen = p->load();
                      while (a > seen && !p->compare_exchange_weak(seen, a)) {}
                  }
                  std::this_thread::sleep_for(std::chrono::milliseconds(5));
              }
          }) {}
    ~anon_sampler() {
        stop_ = true;
        thread_.join();
    }
    std::uint64_t take_peak() { return phase_peak_.exchange(rss_bytes().first); }
    std::uint64_t peak() const { return peak_.load(); }

private:
    std::atomic<bool> stop_{false};
    std::atomic<std::uint64_t> phase_peak_{0}, peak_{0};
    std::thread thread_;
};

// Prints one phase: its time, the time so far, and memory.
struct phase_clock {
    anon_sampler sampler;
    clock_type::time_point start = clock_type::now(), last = start;
    void mark(const char* name) {
        auto now = clock_type::now();
        const std::uint64_t peak = std::max(sampler.take_peak(), rss_bytes().first);
        auto [anon, file] = rss_bytes();
        std::printf("%-18s %7.3f s  (total %7.3f s)  anon %7.0f MB (peak in phase %7.0f MB)  file %7.0f MB\n", name,
                    std::chrono::duration<double>(now - last).count(),
                    std::chrono::duration<double>(now - start).count(), anon / 1e6, peak / 1e6, file / 1e6);
        last = now;
    }
};

// The graph phases with node numbers of type Node; 2 when the graph cannot be built.
template <typename Node>
int graph_phases(phase_clock& clock, const record_index& idx, const class_table& classes, const census_result& c,
                 std::uint64_t file_bytes) {
    auto graph = basic_object_graph<Node>::build(idx, classes, c);
    if (!graph) {
        std::fprintf(stderr, "%s\n", graph.error().describe().c_str());
        return 2;
    }
    clock.mark("object graph");
    const auto dom = basic_dominator_tree<Node>::compute(*graph);
    clock.mark("dominator tree");
    auto children = dom.children();
    retention_report r = summarize_retention(*graph, dom, children, classes, 20, 20);
    clock.mark("retention");
    const auto paths = basic_root_paths<Node>::compute(*graph);
    clock.mark("root paths");
    auto suspects = find_leak_suspects(*graph, dom, children, classes, paths);
    clock.mark("leak suspects");
    std::vector<thread_report> threads;
    for (thread_entry& t : collect_threads(idx, classes, c.thread_roots))
        threads.push_back({std::move(t.name), std::move(t.state), t.daemon, std::move(t.frames), t.object_id});
    clock.mark("threads");
    const off_heap_report off_heap = find_off_heap(*graph, dom, classes, paths, threads);
    clock.mark("off-heap");
    const double nodes = static_cast<double>(graph->size()), refs = static_cast<double>(graph->reference_count());
    const double peak = static_cast<double>(clock.sampler.peak());
    std::printf(
        "%llu direct buffers (%llu held), %llu threads (%zu holder groups), %llu class loaders\n",
        static_cast<unsigned long long>(off_heap.direct_buffers.allocated + off_heap.direct_buffers.unreachable),
        static_cast<unsigned long long>(off_heap.direct_buffers.allocated),
        static_cast<unsigned long long>(off_heap.threads.count), off_heap.threads.holders.size(),
        static_cast<unsigned long long>(off_heap.class_loaders.loaders));
    std::printf("%llu nodes of %zu bits, %llu references, %zu suspects, file %.0f MB\n",
                static_cast<unsigned long long>(graph->size()), sizeof(Node) * 8,
                static_cast<unsigned long long>(graph->reference_count()), suspects.size(),
                static_cast<double>(file_bytes) / 1e6);
    std::printf("peak anonymous memory %.0f MB: %.1f bytes per object, or %.1f per object beside %zu per reference\n",
                peak / 1e6, peak / nodes, (peak - sizeof(Node) * refs) / nodes, sizeof(Node));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const bool wide = argc == 3 && std::string(argv[1]) == "--wide";
    if (argc != 2 && !wide) {
        std::fprintf(stderr, "usage: analysis_phases_bench [--wide] FILE\n");
        return 1;
    }
    phase_clock clock;
    const big_memory::reuse_scope reuse;  // as analyze_dump has it
    auto file = mapped_file::open(argv[argc - 1]);
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
    return wide ? graph_phases<std::uint64_t>(clock, idx, classes, c, file->bytes().size())
                : graph_phases<std::uint32_t>(clock, idx, classes, c, file->bytes().size());
}
