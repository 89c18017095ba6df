// histogram_bench: times the histogram pass (map, parse, index, class table + census walk, finish)
// over one HPROF file, several runs, and reports throughput and the memory it needs beyond the mapping.
//
//   histogram_bench [--runs N] [--top-objects K] [--advise-sequential] FILE
//
// GB/s means 10^9 file bytes per second; MB means 10^6 bytes.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/census.h"
#include "formats/hprof/class_table.h"
#include "formats/hprof/heap_walk.h"
#include "formats/hprof/hprof_reader.h"
#include "formats/hprof/mapped_file.h"
#include "formats/hprof/record_index.h"

using namespace heapd;

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Memory figures of this process from /proc/self/status, in bytes.
struct proc_memory {
    std::uint64_t vm_hwm = 0;  // peak resident set (file-backed pages of the mapping included)
    std::uint64_t vm_rss = 0;
    std::uint64_t rss_anon = 0;  // heap, stacks: what the pass allocates
    std::uint64_t rss_file = 0;  // mapped file pages (the dump) and the program's own text
};

proc_memory read_proc_memory() {
    proc_memory m;
    std::ifstream in("/proc/self/status");
    std::string line;
    auto field = [&](std::string_view key, std::uint64_t& out) {
        if (line.starts_with(key)) out = std::strtoull(line.c_str() + key.size(), nullptr, 10) * 1024;
    };
    while (std::getline(in, line)) {
        field("VmHWM:", m.vm_hwm);
        field("VmRSS:", m.vm_rss);
        field("RssAnon:", m.rss_anon);
        field("RssFile:", m.rss_file);
    }
    return m;
}

// Resets VmHWM to the current RSS so each run's peak is its own; false when the kernel refuses.
bool reset_peak_rss() {
    std::ofstream out("/proc/self/clear_refs");
    out << "5";
    out.flush();
    return static_cast<bool>(out);
}

// Minor and major page faults so far.
std::pair<long, long> page_faults() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return {ru.ru_minflt, ru.ru_majflt};
}

// What one run measured.
struct run_result {
    double map_s = 0, index_s = 0, walk_s = 0, finish_s = 0, unmap_s = 0;
    double total_s = 0;                // open through finish: what a user waits for before the histogram exists
    std::uint64_t beyond_mapping = 0;  // peak RSS minus file-backed RSS
    std::uint64_t anon_growth = 0;     // RssAnon after finish minus RssAnon before the run
    proc_memory mem;
    long minflt = 0, majflt = 0;
};

// What the last run found, to show that the pass did real work.
struct pass_facts {
    unsigned id_size = 0;
    std::size_t heap_records = 0;
    std::size_t problems = 0;
    census_result census;
};

bool run_once(const std::string& path, unsigned top_objects, bool advise, run_result& out, pass_facts& facts) {
    reset_peak_rss();
    proc_memory before = read_proc_memory();
    auto [minflt0, majflt0] = page_faults();

    auto t0 = clock_type::now();
    problem_list problems;
    clock_type::time_point unmap_start;
    {
        auto t = clock_type::now();
        auto mapped = mapped_file::open(path);
        if (!mapped) {
            std::fprintf(stderr, "histogram_bench: %s\n", mapped.error().describe().c_str());
            return false;
        }
        if (advise) mapped->advise_sequential();
        out.map_s = seconds_since(t);

        t = clock_type::now();
        auto reader = hprof_reader::parse(mapped->bytes());
        if (!reader) {
            std::fprintf(stderr, "histogram_bench: %s\n", reader.error().describe().c_str());
            return false;
        }
        record_index idx = record_index::build(*reader);
        out.index_s = seconds_since(t);

        t = clock_type::now();
        class_table classes(idx);
        heap_census census(idx, classes, top_objects);
        // The census adds each CLASS_DUMP to the class table itself.
        walk_heap(idx, census, &problems);
        out.walk_s = seconds_since(t);

        t = clock_type::now();
        census_result result = census.finish();
        out.finish_s = seconds_since(t);
        out.total_s = seconds_since(t0);

        out.mem = read_proc_memory();
        out.beyond_mapping = out.mem.vm_hwm > out.mem.rss_file ? out.mem.vm_hwm - out.mem.rss_file : 0;
        out.anon_growth = out.mem.rss_anon > before.rss_anon ? out.mem.rss_anon - before.rss_anon : 0;

        facts.id_size = idx.id_size();
        facts.heap_records = idx.heap_records().size();
        facts.problems = problems.kept().size() + problems.omitted() + idx.problems().size() + idx.problems_omitted();
        facts.census = std::move(result);
        unmap_start = clock_type::now();
    }
    // Leaving the block above unmapped the file and freed the index, class table and census.
    auto [minflt1, majflt1] = page_faults();
    out.minflt = minflt1 - minflt0;
    out.majflt = majflt1 - majflt0;
    out.unmap_s = seconds_since(unmap_start);
    return true;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string human_bytes(std::uint64_t b) {
    char buf[32];
    if (b >= 1'000'000'000)
        std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
    else if (b >= 1'000'000)
        std::snprintf(buf, sizeof buf, "%.1f MB", b / 1e6);
    else if (b >= 1'000)
        std::snprintf(buf, sizeof buf, "%.1f kB", b / 1e3);
    else
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
    return buf;
}

int usage() {
    std::fprintf(stderr,
                 "usage: histogram_bench [--runs N] [--top-objects K] [--advise-sequential] FILE\n"
                 "  --runs N             repeat the whole pass N times (default 5)\n"
                 "  --top-objects K      largest objects the census keeps (default 20)\n"
                 "  --advise-sequential  madvise(MADV_SEQUENTIAL) the mapping before the walk\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    int runs = 5;
    unsigned top_objects = 20;
    bool advise = false;
    std::string path;
    for (int i = 1; i < argc; ++i) {
        std::string_view a = argv[i];
        if (a == "--runs" && i + 1 < argc)
            runs = std::atoi(argv[++i]);
        else if (a == "--top-objects" && i + 1 < argc)
            top_objects = static_cast<unsigned>(std::atoi(argv[++i]));
        else if (a == "--advise-sequential")
            advise = true;
        else if (a == "-h" || a == "--help")
            return usage();
        else if (!a.starts_with("-") && path.empty())
            path = a;
        else
            return usage();
    }
    if (path.empty() || runs < 1) return usage();

    std::uint64_t file_bytes = 0;
    {
        auto probe = mapped_file::open(path);
        if (!probe) {
            std::fprintf(stderr, "histogram_bench: %s\n", probe.error().describe().c_str());
            return 1;
        }
        file_bytes = probe->size();
    }
    const bool can_reset_peak = reset_peak_rss();
    std::printf("file %s: %s (%llu bytes), %d run(s), top objects %u%s\n", path.c_str(),
                human_bytes(file_bytes).c_str(), static_cast<unsigned long long>(file_bytes), runs, top_objects,
                advise ? ", MADV_SEQUENTIAL" : "");
    std::printf("each run: open+mmap, parse, record index, walk (class table + census), finish, munmap\n");

    std::vector<run_result> results;
    pass_facts facts;
    for (int r = 0; r < runs; ++r) {
        run_result rr;
        if (!run_once(path, top_objects, advise, rr, facts)) return 1;
        results.push_back(rr);
        std::printf(
            "run %d: %.3f s  %.2f GB/s  %.1f M objects/s | map %.4f index %.4f walk %.3f finish %.4f"
            " (teardown %.4f) | minflt %ld majflt %ld | peak beyond mapping %s\n",
            r + 1, rr.total_s, file_bytes / rr.total_s / 1e9,
            (facts.census.instances + facts.census.object_arrays + facts.census.primitive_arrays) / rr.total_s / 1e6,
            rr.map_s, rr.index_s, rr.walk_s, rr.finish_s, rr.unmap_s, rr.minflt, rr.majflt,
            human_bytes(rr.beyond_mapping).c_str());
        std::fflush(stdout);
    }

    const census_result& c = facts.census;
    const std::uint64_t objects = c.instances + c.object_arrays + c.primitive_arrays;
    std::printf("heap: id size %u, %zu heap dump record(s), %zu problem(s)\n", facts.id_size, facts.heap_records,
                facts.problems);
    std::printf(
        "classes %llu, objects %llu (instances %llu, object arrays %llu, primitive arrays %llu),"
        " shallow %s, layout %s\n",
        static_cast<unsigned long long>(c.classes), static_cast<unsigned long long>(objects),
        static_cast<unsigned long long>(c.instances), static_cast<unsigned long long>(c.object_arrays),
        static_cast<unsigned long long>(c.primitive_arrays), human_bytes(c.shallow_bytes).c_str(), c.layout.c_str());
    std::printf("top5:");
    for (std::size_t i = 0; i < c.histogram.size() && i < 5; ++i) {
        const histogram_entry& e = c.histogram[i];
        std::printf("%s %s %llu / %s", i ? ";" : "", e.class_name.c_str(), static_cast<unsigned long long>(e.instances),
                    human_bytes(e.shallow_bytes).c_str());
    }
    std::printf("\n");

    std::vector<double> totals, walks;
    for (const run_result& rr : results) {
        totals.push_back(rr.total_s);
        walks.push_back(rr.walk_s);
    }
    const double best = *std::min_element(totals.begin(), totals.end());
    const double med = median(totals);
    const double best_walk = *std::min_element(walks.begin(), walks.end());
    const double med_walk = median(walks);
    std::uint64_t beyond = 0, anon_growth = 0, hwm = 0, anon = 0;
    for (const run_result& rr : results) {
        beyond = std::max(beyond, rr.beyond_mapping);
        anon_growth = std::max(anon_growth, rr.anon_growth);
        hwm = std::max(hwm, rr.mem.vm_hwm);
        anon = std::max(anon, rr.mem.rss_anon);
    }
    std::printf("pass:  best %.3f s (%.2f GB/s, %.1f M objects/s), median %.3f s (%.2f GB/s)\n", best,
                file_bytes / best / 1e9, objects / best / 1e6, med, file_bytes / med / 1e9);
    std::printf("walk:  best %.3f s (%.2f GB/s), median %.3f s (%.2f GB/s)  [walk_heap with the census only]\n",
                best_walk, file_bytes / best_walk / 1e9, med_walk, file_bytes / med_walk / 1e9);
    std::printf(
        "memory: VmHWM %s (includes the touched pages of the mapping); RssAnon after finish %s,"
        " of which the pass added %s\n",
        human_bytes(hwm).c_str(), human_bytes(anon).c_str(), human_bytes(anon_growth).c_str());
    std::printf(
        "memory: peak beyond mapping %s = VmHWM - RssFile, read after finish with the mapping still"
        " resident%s; it counts the process's whole anonymous memory (allocator arenas, stack) and"
        " transient peaks that RssAnon samples miss\n",
        human_bytes(beyond).c_str(),
        can_reset_peak ? ", VmHWM reset per run via /proc/self/clear_refs"
                       : " (VmHWM could not be reset: peak over all runs)");
    std::printf(
        "summary file_bytes=%llu runs=%d best_s=%.6f median_s=%.6f best_gbps=%.3f median_gbps=%.3f"
        " walk_best_s=%.6f walk_median_s=%.6f objects=%llu classes=%llu beyond_mapping_bytes=%llu"
        " vmhwm_bytes=%llu anon_growth_bytes=%llu\n",
        static_cast<unsigned long long>(file_bytes), runs, best, med, file_bytes / best / 1e9, file_bytes / med / 1e9,
        best_walk, med_walk, static_cast<unsigned long long>(objects), static_cast<unsigned long long>(c.classes),
        static_cast<unsigned long long>(beyond), static_cast<unsigned long long>(hwm),
        static_cast<unsigned long long>(anon_growth));
    return 0;
}
