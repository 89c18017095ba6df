// `heapd analyze`: reads a dump (plain or gzip) and prints its report as text or JSON.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "analysis/analysis.h"
#include "analysis/analysis_index.h"
#include "base/atomic_file.h"
#include "base/big_memory.h"
#include "base/fd_io.h"
#include "base/unique_fd.h"
#include "daemon/commands/analyze_progress.h"
#include "daemon/commands/commands.h"
#include "daemon/config/config_values.h"
#include "daemon/jobs/analysis_memory.h"
#include "formats/hprof/dump_file.h"
#include "formats/report/report_html.h"
#include "formats/report/report_json.h"
#include "formats/report/report_text.h"
#include "formats/sites/allocation_profile.h"
#include "formats/sites/sites_join.h"

namespace heapd::daemon {
namespace {

// The options of one analyze invocation.
struct analyze_args {
    std::string file;
    bool json = false;
    unsigned top = 20;
    bool top_given = false;
    bool no_threads = false;
    bool no_retained = false;
    double suspect_percent = 10;
    bool no_waste = false;
    std::string inflate_dir;
    bool no_index = false;
    std::string index_dir;
    unsigned dump = 0;                   // which heap dump of a file holding several (0: the last)
    std::string heap;                    // Android: the heap suspects speak of ("" the app's, "all")
    unsigned workers = 0;                // threads that work at once (0: one per core, at most 4)
    std::string memory;                  // anonymous memory the analysis may take ("4G"), "" for no limit of its own
    std::string spill_dir;               // where big arrays go beyond it (default: beside the dump)
    std::string spill_reserve = "1G";    // the spill leaves at least this free on its disk ...
    unsigned spill_reserve_percent = 5;  // ... and at least this share of it
    bool progress = false;  // progress lines on stderr when it is no terminal (a terminal gets a bar anyway)
    std::string sites;      // an allocation profile of heapd's agent to join (heapd sites --save)
    std::string html;       // also write the HTML report here
};

// The report from the dump's index when it matches, else from a fresh analysis, which is then
// indexed for next time (a dump in a place we cannot write to is simply not indexed).
result<analysis_report> indexed_analysis(const analyze_args& a, analysis_options options) {
    options.top = 0;  // the index keeps the whole histogram
    std::optional<dump_identity> identity;
    std::string index_file = index_path(a.file, a.index_dir);
    if (!a.no_index) {
        if (auto id = identify_dump(a.file)) identity = *id;
        if (identity)
            if (auto cached = load_index(index_file, *identity, index_options_key(options))) {
                cached->summary.file = a.file;
                return std::move(*cached);
            }
    }
    auto dump = dump_file::open(a.file, {a.inflate_dir});
    if (!dump) return std::unexpected(dump.error());
    if (!dump->inflate_warning().empty()) std::fprintf(stderr, "heapd: warning: %s\n", dump->inflate_warning().c_str());
    options.bulk_reads_done = [&dump] { dump->release_resident(); };
    daemon::analyze_progress progress(a.file.substr(a.file.rfind('/') + 1), dump->bytes().size(), a.progress);
    if (progress.active()) {
        options.phase_started = [&progress](std::string_view phase) {
            progress.phase(phase);
            return true;
        };
        options.phase_progress = [&progress](double done) { progress.within(done); };
    }
    auto report = analyze_dump(dump->bytes(), options);
    if (report && identity) {
        if (auto saved = save_index(index_file, *identity, index_options_key(options), *report); !saved)
            std::fprintf(stderr, "heapd: note: no index kept: %s\n", saved.error().message.c_str());
    }
    return report;
}

int analyze_and_print(const analyze_args& a) {
    std::optional<sites::allocation_profile> profile;
    if (!a.sites.empty()) {
        auto text = read_small_file(a.sites, sites::max_answer_bytes);
        if (!text) {
            std::fprintf(stderr, "heapd: --sites %s: %s\n", a.sites.c_str(), std::strerror(errno));
            return bad_input;
        }
        auto parsed = sites::parse_allocation_profile(*text);
        if (!parsed || !parsed->has_tables) {
            std::fprintf(
                stderr, "heapd: --sites %s: %s\n", a.sites.c_str(),
                parsed ? "an answer without tables (save one of --show or --stop)" : parsed.error().message.c_str());
            return bad_input;
        }
        profile = std::move(*parsed);
    }
    analysis_options options;
    // The index keeps at least 100 of each top list, so other --top values are cut from it.
    const unsigned largest = a.top == 0 ? 20 : a.top;
    options.largest = std::max(largest, 100u);
    options.threads = !a.no_threads;
    options.retained = !a.no_retained;
    options.suspect_threshold = a.suspect_percent / 100;
    options.waste = !a.no_waste;
    options.file_name = a.file;
    options.dump = a.dump;
    options.heap = a.heap;
    options.workers = a.workers;
    auto report = indexed_analysis(a, options);
    if (!report) {
        std::fprintf(stderr, "heapd: %s: %s\n", a.file.c_str(), report.error().describe().c_str());
        return bad_input;
    }
    // JSON carries the whole histogram unless --top is given; text shows --top rows.
    unsigned top = a.json && !a.top_given ? 0 : a.top;
    if (top != 0 && report->histogram.size() > top) report->histogram.resize(top);
    auto cut = [](auto& v, std::size_t n) {
        if (v.size() > n) v.resize(n);
    };
    cut(report->largest_objects, largest);
    cut(report->retention.dominators, largest);
    cut(report->retention.retained_by_class, largest);
    cut(report->waste.duplicate_strings_top, largest);
    if (profile) sites::join_allocation_sites(*report, *profile);
    if (!a.html.empty()) {
        auto saved = save_html(a.html, render_html(*report, {}));
        if (!saved) {
            std::fprintf(stderr, "heapd: --html %s\n", saved.error().message.c_str());
            return bad_input;
        }
        std::fprintf(stderr, "heapd: %s\n", saved->c_str());
    }
    if (a.json) {
        std::string text = to_json(*report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fputc('\n', stdout);
    } else {
        std::string text = render_text(*report, {a.top, 32});
        std::fwrite(text.data(), 1, text.size(), stdout);
    }
    bool damaged = false;
    for (const problem_report& p : report->problems) {
        std::fprintf(stderr, "heapd: %s: %s: %s (at file offset %llu)\n", p.truncation ? "warning" : "error",
                     a.file.c_str(), p.message.c_str(), static_cast<unsigned long long>(p.offset));
        damaged = damaged || !p.truncation;
    }
    return damaged ? bad_input : ok;
}

int run_analyze(const analyze_args& a) {
    daemon::memory_plan plan;
    if (!a.memory.empty()) {
        auto bytes = daemon::parse_size(a.memory);
        if (!bytes || *bytes == 0) {
            std::fprintf(stderr, "heapd: --memory %s: not a size (e.g. 512M, 4G)\n", a.memory.c_str());
            return usage;
        }
        plan.limit = *bytes;
    }
    // Open for as long as the process runs: the big arrays spilled live in it.
    const std::string spill_dir = a.spill_dir.empty() ? parent_of(a.file) : a.spill_dir;
    const unique_fd spill(daemon::spill_file_in(spill_dir));
    if (!spill && !a.spill_dir.empty()) {
        std::fprintf(stderr, "heapd: --spill-dir %s: cannot make a file there: %s\n", spill_dir.c_str(),
                     std::strerror(errno));
        return bad_input;
    }
    plan.spill_file = spill.get();
    auto floor = daemon::parse_size(a.spill_reserve);
    if (!floor) {
        std::fprintf(stderr, "heapd: --spill-reserve %s: not a size (e.g. 1G, 512M, 0)\n", a.spill_reserve.c_str());
        return usage;
    }
    plan.reserve = {a.spill_reserve_percent, *floor};
    if (auto applied = daemon::apply_memory_plan(plan); !applied) {
        std::fprintf(stderr, "heapd: %s\n", applied.error().message.c_str());
        return bad_input;
    }
    try {
        const int status = analyze_and_print(a);
        if (const auto used = big_memory::current_usage(); used.spilled_peak != 0)
            std::fprintf(stderr, "heapd: note: %s of big arrays were kept in a file in %s (at most %s in memory)\n",
                         text::human_bytes(used.spilled_peak).c_str(), spill_dir.c_str(),
                         text::human_bytes(used.anonymous_peak).c_str());
        return status;
    } catch (const std::bad_alloc&) {
        const std::string limit = a.memory.empty() ? "the memory available" : "--memory " + a.memory;
        std::fprintf(stderr, "heapd: %s: %s%s\n", a.file.c_str(), daemon::out_of_room_text(limit, spill_dir).c_str(),
                     spill ? "" : " (and nothing could be spilled)");
        return bad_input;
    }
}

}  // namespace

void add_analyze(CLI::App& app, int& status) {
    auto args = std::make_shared<analyze_args>();
    CLI::App* sub =
        app.add_subcommand("analyze", "Summary, class histogram, largest objects and threads of a heap dump");
    sub->add_option("file", args->file, "HPROF file, plain or gzip-compressed")->required();
    sub->add_flag("--json", args->json, "Print JSON for machines (the whole histogram unless --top is given)");
    sub->add_option("--top", args->top, "Rows per table (0: all)")->capture_default_str();
    sub->add_flag("--no-threads", args->no_threads, "Skip resolving thread names and states");
    sub->add_flag("--no-retained", args->no_retained, "Skip the object graph: no dominators or retained sizes");
    sub->add_option("--suspect-threshold", args->suspect_percent,
                    "Leak suspects retain at least this percentage of the reachable heap")
        ->check(CLI::Range(0.1, 100.0))
        ->capture_default_str();
    sub->add_flag("--no-index", args->no_index, "Neither read nor write the dump's analysis index");
    sub->add_option("--index-dir", args->index_dir, "Keep the analysis index here (default: beside the dump)");
    sub->add_flag("--no-waste", args->no_waste,
                  "Skip the waste report (duplicate strings, sparse collections, boxes, zero arrays)");
    sub->add_option("--inflate-dir", args->inflate_dir, "Where to inflate a compressed dump (default: beside it)");
    sub->add_option("--memory", args->memory,
                    "Memory the analysis may take (e.g. 4G); its big arrays go to a file beyond three quarters "
                    "of it (default: no limit, arrays beyond half the available memory go to a file)");
    sub->add_option("--spill-dir", args->spill_dir,
                    "Where the file for big arrays is made (nameless, gone at exit; default: beside the dump)");
    sub->add_option("--spill-reserve", args->spill_reserve,
                    "Free space the spill file leaves on its disk, at the least (with --spill-reserve-percent: the "
                    "larger of the two)")
        ->capture_default_str();
    sub->add_option("--spill-reserve-percent", args->spill_reserve_percent,
                    "Share of its disk the spill file leaves free, at the least")
        ->check(CLI::Range(0, 100))
        ->capture_default_str();
    sub->add_option("--sites", args->sites,
                    "Join an allocation profile saved by `heapd sites PID --save FILE` (taken while the JVM ran): "
                    "each leak suspect says where its objects were allocated");
    sub->add_option("--html", args->html,
                    "Also write the report as one self-contained HTML page (suspects, the dominator tree as a "
                    "picture, tables) to this file");
    sub->add_flag("--progress", args->progress,
                  "Print progress lines on stderr when it is no terminal (a terminal always shows a progress bar)");
    sub->add_option("--dump", args->dump,
                    "Which heap dump of a file that holds several: 1 for the first (default: the last)")
        ->check(CLI::PositiveNumber);
    sub->add_option("--heap", args->heap,
                    "Android dumps: the heap that suspects, biggest retainers and retained sizes speak of (default: "
                    "app, the others' preloaded objects given; all: every heap; or zygote, image)");
    sub->add_option("--workers", args->workers,
                    "Threads that work at once (default 0: one per core, at most 4; 1: one). The report is the "
                    "same whatever the number");
    sub->callback([args, &status, sub] {
        args->top_given = sub->count("--top") > 0;
        status = run_analyze(*args);
    });
}

}  // namespace heapd::daemon
