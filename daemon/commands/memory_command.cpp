// `heapd memory PID [--json] [--no-attach]`: where the JVM's memory goes, against the limit that
// applies to it (daemon/jvms/memory_probe.h).
#include <cstdio>
#include <memory>
#include <string>

#include "base/safe_text.h"
#include "daemon/commands/commands.h"
#include "daemon/jvms/memory_probe.h"
#include "formats/memory/memory_report.h"

namespace heapd::daemon {
namespace {

// The options of one memory invocation.
struct memory_args {
    int pid = 0;
    bool json = false;
    bool no_attach = false;
    double timeout_seconds = 5;
};

exit_code run_memory(const memory_args& a) {
    memory_probe_options o;
    o.attach = !a.no_attach;
    o.attach_timeout = std::chrono::milliseconds(static_cast<long>(a.timeout_seconds * 1000));
    const auto b = probe_memory(a.pid, o);
    if (!b) {
        std::fprintf(stderr, "heapd: process %d: %s\n", a.pid, terminal_safe(b.error().describe()).c_str());
        return bad_input;
    }
    const std::string out =
        a.json ? to_json(*b).dump(2, ' ', false, memory_json::error_handler_t::replace) + "\n" : memory_text(*b);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return ok;
}

}  // namespace

void add_memory(CLI::App& app, int& status) {
    auto args = std::make_shared<memory_args>();
    CLI::App* sub = app.add_subcommand(
        "memory", "Where a JVM's memory goes (heap, metaspace, code, thread stacks, files, native) against its limit");
    sub->add_option("pid", args->pid, "Process id")->required()->check(CLI::PositiveNumber);
    sub->add_flag("--json", args->json, "Print JSON for machines");
    sub->add_flag("--no-attach", args->no_attach,
                  "Read /proc, hsperfdata and the cgroup only; do not ask the JVM where its heap and code lie");
    sub->add_option("--timeout", args->timeout_seconds, "Seconds allowed for each of the JVM's answers")
        ->check(CLI::Range(0.1, 600.0))
        ->capture_default_str();
    sub->callback([args, &status] { status = run_memory(*args); });
}

}  // namespace heapd::daemon
