// `heapd diff`: analyzes two dumps of one JVM, one after the other, and prints what grew per class.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "analysis/dump_diff.h"
#include "daemon/commands/commands.h"
#include "formats/hprof/dump_file.h"
#include "formats/report/report_html.h"
#include "formats/report/report_json.h"
#include "formats/report/report_text.h"

namespace heapd::daemon {
namespace {

// The options of one diff invocation.
struct diff_args {
    std::string before, after;
    bool json = false;
    unsigned top = 20;
    bool top_given = false;
    bool no_retained = false;
    std::string inflate_dir;
    std::string html;  // also write the HTML page here
};

// A dump named on the command line: FILE, or FILE:N for the Nth heap dump of a file holding several
// (when no file of the whole name exists).
struct dump_ref {
    std::string file;
    unsigned dump = 0;  // 0: the last
};

dump_ref parse_dump_ref(const std::string& arg) {
    const auto colon = arg.rfind(':');
    if (colon == std::string::npos || colon + 1 == arg.size() || colon + 6 < arg.size() ||
        ::access(arg.c_str(), F_OK) == 0)
        return {arg, 0};
    unsigned n = 0;
    for (char c : arg.substr(colon + 1)) {
        if (c < '0' || c > '9') return {arg, 0};
        n = n * 10 + static_cast<unsigned>(c - '0');
    }
    return n == 0 ? dump_ref{arg, 0} : dump_ref{arg.substr(0, colon), n};
}

// One dump's report; the mapping (and any inflated copy) is released before returning, so only one
// dump is open at a time. Problems go to stderr as `heapd analyze` prints them; damaged is set when
// one is more than a truncation.
std::optional<analysis_report> analyze_one(const std::string& arg, const diff_args& a, bool& damaged) {
    const auto [file, number] = parse_dump_ref(arg);
    auto dump = dump_file::open(file, {a.inflate_dir});
    if (!dump) {
        std::fprintf(stderr, "heapd: %s\n", dump.error().describe().c_str());
        return std::nullopt;
    }
    if (!dump->inflate_warning().empty()) std::fprintf(stderr, "heapd: warning: %s\n", dump->inflate_warning().c_str());
    analysis_options options = diff_analysis_options(arg, !a.no_retained);
    options.dump = number;
    auto report = analyze_dump(dump->bytes(), options);
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
    int fd = ::open(parse_dump_ref(a.after).file.c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC);
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
    if (!a.html.empty()) {
        auto saved = save_html(a.html, render_html(d, "What grew from " + a.before + " to " + a.after));
        if (!saved) {
            std::fprintf(stderr, "heapd: --html %s\n", saved.error().message.c_str());
            return bad_input;
        }
        std::fprintf(stderr, "heapd: %s\n", saved->c_str());
    }
    return damaged ? bad_input : ok;
}

}  // namespace

void add_diff(CLI::App& app, int& status) {
    auto args = std::make_shared<diff_args>();
    CLI::App* sub = app.add_subcommand("diff", "What grew per class between two heap dumps of the same JVM");
    sub->add_option(
           "old", args->before,
           "The earlier HPROF file, plain or gzip-compressed (FILE:N: its Nth heap dump, for a file holding several)")
        ->required();
    sub->add_option("new", args->after, "The later HPROF file (or FILE:N)")->required();
    sub->add_flag("--json", args->json, "Print JSON for machines (every changed class unless --top is given)");
    sub->add_option("--top", args->top, "Rows per list (0: all)")->capture_default_str();
    sub->add_flag("--no-retained", args->no_retained, "Skip the object graphs: compare shallow sizes only");
    sub->add_option("--inflate-dir", args->inflate_dir, "Where to inflate compressed dumps (default: beside them)");
    sub->add_option("--html", args->html, "Also write the diff as one self-contained HTML page to this file");
    sub->callback([args, &status, sub] {
        args->top_given = sub->count("--top") > 0;
        status = run_diff(*args);
    });
}

}  // namespace heapd::daemon
