// `heapd strip`: writes a copy of a dump without primitive array contents, atomically.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "base/atomic_file.h"
#include "daemon/commands/commands.h"
#include "formats/hprof/dump_file.h"
#include "formats/hprof/strip.h"

namespace heapd::daemon {
namespace {

// The options of one strip invocation.
struct strip_args {
    std::string in, out;
    bool keep_strings = false;
};

int run_strip(const strip_args& a) {
    auto dump = dump_file::open(a.in);
    if (!dump) {
        std::fprintf(stderr, "heapd: %s\n", dump.error().describe().c_str());
        return bad_input;
    }
    auto out = atomic_file::create(a.out, 0600);
    if (!out) {
        std::fprintf(stderr, "heapd: %s\n", out.error().describe().c_str());
        return bad_input;
    }
    auto stats = strip_dump(dump->bytes(), out->fd(), {a.keep_strings});
    auto committed = stats ? out->commit() : result<void>{};
    if (!stats || !committed) {
        std::fprintf(stderr, "heapd: %s: %s\n", a.in.c_str(),
                     stats ? "cannot write the stripped copy" : stats.error().describe().c_str());
        return bad_input;
    }
    std::fprintf(stderr, "heapd: wrote %s: %llu primitive arrays zeroed (%llu bytes), %llu strings kept%s\n",
                 a.out.c_str(), static_cast<unsigned long long>(stats->arrays_zeroed),
                 static_cast<unsigned long long>(stats->bytes_zeroed),
                 static_cast<unsigned long long>(stats->strings_kept),
                 stats->truncated ? "; the input was cut short, its partial last record left out" : "");
    return ok;
}

}  // namespace

void add_strip(CLI::App& app, int& status) {
    auto args = std::make_shared<strip_args>();
    CLI::App* sub = app.add_subcommand("strip", "Copy a dump with primitive array contents zeroed, safe to share");
    sub->add_option("in", args->in, "HPROF file to read, plain or gzip-compressed")->required();
    sub->add_option("out", args->out, "Where to write the stripped copy")->required();
    sub->add_flag("--keep-strings", args->keep_strings, "Keep java.lang.String contents readable");
    sub->callback([args, &status] { status = run_strip(*args); });
}

}  // namespace heapd::daemon
