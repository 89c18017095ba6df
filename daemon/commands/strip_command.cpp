// `heapd strip`: writes a copy of a dump without primitive array contents, atomically.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "daemon/commands/commands.h"
#include "formats/hprof/dump_file.h"
#include "formats/hprof/strip.h"

namespace heapd::cmd {
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
    std::string tmp = a.out + ".tmp-XXXXXX";
    int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
    if (fd < 0) {
        std::perror(("heapd: cannot create " + tmp).c_str());
        return bad_input;
    }
    ::fchmod(fd, 0600);
    auto stats = strip_dump(dump->bytes(), fd, {a.keep_strings});
    bool synced = stats && ::fsync(fd) == 0;
    ::close(fd);
    if (!stats || !synced || ::rename(tmp.c_str(), a.out.c_str()) != 0) {
        ::unlink(tmp.c_str());
        std::fprintf(stderr, "heapd: %s: %s\n", a.in.c_str(),
                     stats ? "cannot write the stripped copy" : stats.error().describe().c_str());
        return bad_input;
    }
    std::fprintf(stderr, "heapd: wrote %s: %llu primitive arrays zeroed (%llu bytes), %llu strings kept%s\n",
                 a.out.c_str(), static_cast<unsigned long long>(stats->arrays_zeroed),
                 static_cast<unsigned long long>(stats->bytes_zeroed), static_cast<unsigned long long>(stats->strings_kept),
                 stats->truncated ? "; the input was cut short, its partial last record left out" : "");
    return ok;
}

} // namespace

void add_strip(CLI::App& app, int& status) {
    auto args = std::make_shared<strip_args>();
    CLI::App* sub = app.add_subcommand("strip", "Copy a dump with primitive array contents zeroed, safe to share");
    sub->add_option("in", args->in, "HPROF file to read, plain or gzip-compressed")->required();
    sub->add_option("out", args->out, "Where to write the stripped copy")->required();
    sub->add_flag("--keep-strings", args->keep_strings, "Keep java.lang.String contents readable");
    sub->callback([args, &status] { status = run_strip(*args); });
}

} // namespace heapd::cmd
