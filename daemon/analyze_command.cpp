// `heapd analyze`: reads a dump (plain or gzip) and prints its report as text or JSON.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "formats/analysis.h"
#include "formats/dump_file.h"
#include "formats/report_json.h"
#include "formats/report_text.h"

namespace heapd::cmd {
namespace {

// The options of one analyze invocation.
struct analyze_args {
    std::string file;
    bool json = false;
    unsigned top = 20;
    bool top_given = false;
    bool no_threads = false;
    bool no_retained = false;
    bool no_waste = false;
    std::string inflate_dir;
};

int run_analyze(const analyze_args& a) {
    auto dump = dump_file::open(a.file, {a.inflate_dir});
    if (!dump) {
        std::fprintf(stderr, "heapd: %s\n", dump.error().describe().c_str());
        return bad_input;
    }
    if (!dump->inflate_warning().empty()) std::fprintf(stderr, "heapd: warning: %s\n", dump->inflate_warning().c_str());
    analysis_options options;
    // JSON carries the whole histogram unless --top is given; text shows --top rows.
    options.top = a.json && !a.top_given ? 0 : a.top;
    options.largest = a.top == 0 ? 20 : a.top;
    options.threads = !a.no_threads;
    options.retained = !a.no_retained;
    options.waste = !a.no_waste;
    options.file_name = a.file;
    auto report = analyze_dump(dump->bytes(), options);
    if (!report) {
        std::fprintf(stderr, "heapd: %s: %s\n", a.file.c_str(), report.error().describe().c_str());
        return bad_input;
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

} // namespace

void add_analyze(CLI::App& app, int& status) {
    auto args = std::make_shared<analyze_args>();
    CLI::App* sub = app.add_subcommand("analyze", "Summary, class histogram, largest objects and threads of a heap dump");
    sub->add_option("file", args->file, "HPROF file, plain or gzip-compressed")->required();
    sub->add_flag("--json", args->json, "Print JSON for machines (the whole histogram unless --top is given)");
    sub->add_option("--top", args->top, "Rows per table (0: all)")->capture_default_str();
    sub->add_flag("--no-threads", args->no_threads, "Skip resolving thread names and states");
    sub->add_flag("--no-retained", args->no_retained, "Skip the object graph: no dominators or retained sizes");
    sub->add_flag("--no-waste", args->no_waste,
                  "Skip the waste report (duplicate strings, sparse collections, boxes, zero arrays)");
    sub->add_option("--inflate-dir", args->inflate_dir, "Where to inflate a compressed dump (default: beside it)");
    sub->callback([args, &status, sub] {
        args->top_given = sub->count("--top") > 0;
        status = run_analyze(*args);
    });
}

} // namespace heapd::cmd
