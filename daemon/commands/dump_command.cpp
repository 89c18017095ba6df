// `heapd dump PID [--socket PATH] [--spool DIR]`: the OnOutOfMemoryError hook
// (-XX:OnOutOfMemoryError='heapd dump %p'). It returns at once and writes nothing: its stdout and
// stderr are the JVM's. The daemon dumps the JVM (or adopts the dump the JVM wrote) once the hook
// has returned; when no daemon acknowledges the request in time (none runs, it is too busy, it
// hangs), the request is spooled: the running daemon takes it at once, a stopped one at its next
// start. The hook removes nothing: the daemon removes heapd's armed dump once its entry is kept.
#include <chrono>
#include <memory>
#include <string>

#include "daemon/commands/commands.h"
#include "daemon/oom/oom_hook.h"
#include "daemon/oom/spool.h"

namespace heapd::daemon {
namespace {

// Options of `heapd dump`.
struct dump_options {
    int pid = 0;
    std::string socket = daemon::hook_socket_path();
    std::string spool = daemon::default_spool_dir();
    unsigned hold = 120;  // seconds the JVM may be held for a snapshot; 0: none
};

// How long the hook waits for the daemon to connect, read the request and acknowledge it (the
// request in its OOM intake, a few milliseconds when it is well) before it spools the request.
constexpr std::chrono::milliseconds acknowledgement_limit{1500};

// Exit status: 0 handed to the daemon or spooled; 2 neither (the daemon refused, or the spool
// cannot be written).
int run_dump(const dump_options& o) {
    auto capture = daemon::capture_oom(o.pid);
    if (o.hold == 0) {
        capture.args.erase("snapshot");
        capture.args.erase("wait");
    }
    auto handed = daemon::hand_over(o.socket, capture, acknowledgement_limit, std::chrono::seconds(o.hold));
    if (handed) return ok;
    // The daemon heard it and refused it for good (another user's JVM, say); a daemon too busy to
    // take it now gives an io error, and the spool is watched by the running daemon too.
    if (handed.error().code != error_code::io) return bad_input;
    auto spooled = daemon::spool_request(o.spool, capture.args);
    return spooled ? ok : bad_input;
}

}  // namespace

void add_dump(CLI::App& app, int& status) {
    auto o = std::make_shared<dump_options>();
    CLI::App* sub = app.add_subcommand(
        "dump", "OnOutOfMemoryError hook: hand the JVM's dump to heapd (returns at once when the JVM wrote one)");
    sub->add_option("pid", o->pid, "The JVM's pid (%p in -XX:OnOutOfMemoryError)")
        ->required()
        ->check(CLI::PositiveNumber);
    sub->add_option("--socket", o->socket, "heapd's socket (default: $HEAPD_SOCKET, else /run/heapd/heapd.sock)");
    sub->add_option(
        "--spool", o->spool,
        "Where to leave the request when heapd is not running (default: $HEAPD_SPOOL, else /var/spool/heapd)");
    sub->add_option("--hold", o->hold,
                    "Seconds the JVM may be held while heapd takes a snapshot of it, when it wrote no dump of its "
                    "own (it was not armed); 0: none, heapd dumps it once the hook returns, if it still runs")
        ->capture_default_str();
    sub->callback([o, &status] { status = run_dump(*o); });
}

}  // namespace heapd::daemon
