// `heapd diff`: analyzes two dumps of one JVM, one after the other, and prints what grew per class.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "daemon/commands/commands.h"
#include "formats/analysis/dump_diff.h"
#include "formats/hprof/dump_file.h"
#include "formats/report/report_json.h"
#include "formats/report/report_text.h"

namespace heapd::cmd {
namespace {

// The options of one diff invocation.
struct diff_args {
    std::string before, after;
    bool json = false;
    unsigned top = 20;
    bool top_given = false;
    bool no_retained = false;
    std::string inflate_dir;
};

// One dump's report; the mapping (and any inflated copy) is released before returning, so only one
// dump is open at a time. Problems go to stderr as `heapd analyze` prints them; damaged is set when
// one is more than a truncation.
std::optional<analysis_report> analyze_one(const std::string& file, const diff_args& a, bool& damaged) {
    auto dump = dump_file::open(file, {a.inflate_dir});
    if (!dump) {
        std::fprintf(stderr, "heapd: %s\n", dump.error().describe().c_str());
        return std::nullopt;
    }
    if (!dump->inflate_warning().empty()) std::fprintf(stderr, "heapd: warning: %s\n", dump->inflate_warning().c_str());
    auto report = analyze_dump(dump->bytes(), diff_analysis_options(file, !a.no_retained));
    if (!report) {
        std::fprintf(stderr, "heapd: %s: %s\n", file.c_str(), report.error().describe().c_str());
        return std::nullopt;
    }
    for (const problem_report& p : report->problems) {
        std::fprintf(stderr, "heapd: %s: %s: %s (at file offset %llu)\n", p.truncation ? "warning" : "error",
                     file.c_str(), p.message.c_str(), static_cast<unsigned long long>(p.offset));
        damaged = damaged || !p.truncation;
    }
    return std::move(*report);
}

int run_diff(const diff_args& a) {
    // The later dump must be there before the earlier one is analyzed (which takes a while).
    int fd = ::open(a.after.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        std::fprintf(stderr, "heapd: cannot open %s: %s\n", a.after.c_str(), std::strerror(errno));
        return bad_input;
    }
    ::close(fd);
    bool damaged = false;
    std::optional<analysis_report> before = analyze_one(a.before, a, damaged);
    if (!before) return bad_input;
    std::optional<analysis_report> after = analyze_one(a.after, a, damaged);
    if (!after) return bad_input;
    // JSON carries every changed class unless --top is given; text shows --top rows.
    diff_report d = diff_analyses(*before, *after, a.json && !a.top_given ? 0 : a.top);
    before.reset();
    after.reset();
    std::string text = a.json ? to_json(d).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                              : render_text(d, {a.top, 0});
    std::fwrite(text.data(), 1, text.size(), stdout);
    return damaged ? bad_input : ok;
}

}  // namespace

void add_diff(CLI::App& app, int& status) {
    auto args = std::make_shared<diff_args>();
    CLI::App* sub = app.add_subcommand("diff", "What grew per class between two heap dumps of the same JVM");
    sub->add_option("old", args->before, "The earlier HPROF file, plain or gzip-compressed")->required();
    sub->add_option("new", args->after, "The later HPROF file")->required();
    sub->add_flag("--json", args->json, "Print JSON for machines (every changed class unless --top is given)");
    sub->add_option("--top", args->top, "Rows per list (0: all)")->capture_default_str();
    sub->add_flag("--no-retained", args->no_retained, "Skip the object graphs: compare shallow sizes only");
    sub->add_option("--inflate-dir", args->inflate_dir, "Where to inflate compressed dumps (default: beside them)");
    sub->callback([args, &status, sub] {
        args->top_given = sub->count("--top") > 0;
        status = run_diff(*args);
    });
}

}  // namespace heapd::cmd
