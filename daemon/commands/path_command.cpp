// `heapd path`: the shortest strong paths from GC roots to one object of a dump.
#include <cstdio>
#include <memory>
#include <string>

#include "analysis/object_paths.h"
#include "daemon/commands/commands.h"
#include "formats/hprof/dump_file.h"
#include "formats/report/report_json.h"
#include "formats/report/report_text.h"

namespace heapd::daemon {
namespace {

// The options of one path invocation.
struct path_args {
    std::string file;
    std::string object;  // id as the reports print it: 0x-prefixed hex, or decimal
    unsigned roots = 1;
    unsigned dump = 0;  // 0: the last heap dump of the file
    bool json = false;
    std::string inflate_dir;
};

int run_path(const path_args& a) {
    std::uint64_t id = 0;
    try {
        std::size_t used = 0;
        id = std::stoull(a.object, &used, 0);
        if (used != a.object.size()) throw std::invalid_argument(a.object);
    } catch (const std::exception&) {
        std::fprintf(stderr, "heapd: %s is not an object id (0x-prefixed hex or decimal)\n", a.object.c_str());
        return usage;
    }
    auto dump = dump_file::open(a.file, {a.inflate_dir});
    if (!dump) {
        std::fprintf(stderr, "heapd: %s\n", dump.error().describe().c_str());
        return bad_input;
    }
    auto report = find_object_paths(dump->bytes(), id, a.roots, a.dump);
    if (!report) {
        std::fprintf(stderr, "heapd: %s: %s\n", a.file.c_str(), report.error().describe().c_str());
        return bad_input;
    }
    report->file = a.file;
    std::string text = a.json ? to_json(*report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                              : render_text(*report);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return ok;
}

}  // namespace

void add_path(CLI::App& app, int& status) {
    auto args = std::make_shared<path_args>();
    CLI::App* sub = app.add_subcommand("path", "Shortest strong paths from GC roots to an object of a heap dump");
    sub->add_option("file", args->file, "HPROF file, plain or gzip-compressed")->required();
    sub->add_option("object", args->object, "Object id as reports print it (0x... or decimal)")->required();
    sub->add_option("--roots", args->roots, "Paths from up to this many different GC roots")
        ->check(CLI::Range(1u, 1000u))
        ->capture_default_str();
    sub->add_flag("--json", args->json, "Print JSON for machines");
    sub->add_option("--inflate-dir", args->inflate_dir, "Where to inflate a compressed dump (default: beside it)");
    sub->add_option("--dump", args->dump,
                    "Which heap dump of a file that holds several: 1 for the first (default: the last)")
        ->check(CLI::PositiveNumber);
    sub->callback([args, &status] { status = run_path(*args); });
}

}  // namespace heapd::daemon
