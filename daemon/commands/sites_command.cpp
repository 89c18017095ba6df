// `heapd sites PID`: where a running JVM allocates, sampled by heapd's agent (agent/), which this
// loads into the JVM through attach. By default samples for --seconds and prints hprof's SITES
// table; --start, --show, --stop and --status work on a sampling that outlives the command.
#include <cstdio>
#include <memory>
#include <string>

#include "attach/agent_control.h"
#include "base/interruptible_sleep.h"
#include "base/safe_text.h"
#include "daemon/commands/agent_call.h"
#include "daemon/commands/commands.h"
#include "formats/report/quantities.h"
#include "formats/report/sites_report.h"
#include "formats/sites/allocation_profile.h"
#include "formats/sites/site_ranking.h"
#include "formats/wire/sampling_limits.h"

namespace heapd::daemon {
namespace {

// The options of one sites invocation.
struct sites_args {
    int pid = 0;
    double seconds = 10;
    bool start = false, show = false, stop = false, status = false;
    std::int64_t interval = 512 * 1024;
    int depth = 16;
    double cutoff = 0.0001;
    unsigned top = 0;
    std::string by = "site", order = "live";
    bool no_gc = false;
    bool json = false;
    std::string agent;
    double timeout_seconds = 30;
    std::string save;  // the agent's answer, as it came, for heapd analyze --sites
};

int print_table(const sites_args& args, const sites::allocation_profile& profile) {
    sites::table_options t;
    t.by = args.by == "method"  ? sites::grouping::method
           : args.by == "class" ? sites::grouping::klass
                                : sites::grouping::site;
    t.order = args.order == "allocated" ? sites::ranking::allocated : sites::ranking::live;
    t.depth = args.depth;
    t.cutoff = args.cutoff;
    t.top = args.top;
    sites_report table = sites::rank_sites(profile, t, !args.no_gc);
    if (args.json) {
        nlohmann::ordered_json j = to_json(table);
        j["pid"] = args.pid;
        std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
        std::printf("Process %d\n%s", args.pid, render_sites_text(table).c_str());
    }
    return ok;
}

int run_sites(const sites_args& args) {
    if (int(args.start) + int(args.show) + int(args.stop) + int(args.status) > 1) {
        std::fprintf(stderr, "heapd: sites: --start, --show, --stop and --status go alone\n");
        return usage;
    }
    auto library = attach::find_agent_library(args.agent);
    if (!library) {
        std::fprintf(stderr, "heapd: sites: %s\n", library.error().message.c_str());
        return bad_input;
    }
    agent_call agent{"sites", args.pid, *library, args.timeout_seconds, args.save};
    const std::string start =
        "start,interval=" + std::to_string(args.interval) + ",depth=" + std::to_string(args.depth);
    const std::string gc = args.no_gc ? "" : ",gc=1";
    if (args.status) {
        auto p = agent.run("status");
        if (!p) return p.error();
        if (p->sampling)
            std::printf("process %d: sampling for %.1f s, every %s, %d frames (agent %s, %s of memory)\n", args.pid,
                        p->seconds, text::human_bytes(static_cast<std::uint64_t>(p->interval)).c_str(), p->depth,
                        terminal_safe(p->agent_version).c_str(), text::human_bytes(p->memory_bytes).c_str());
        else
            std::printf("process %d: not sampling (agent %s loaded)\n", args.pid,
                        terminal_safe(p->agent_version).c_str());
        return ok;
    }
    if (args.start) {
        auto p = agent.run(start);
        if (!p) return p.error();
        std::printf("process %d: sampling every %s, %d frames; `heapd sites %d --show` or `--stop` for the table\n",
                    args.pid, text::human_bytes(static_cast<std::uint64_t>(p->interval)).c_str(), p->depth, args.pid);
        return ok;
    }
    if (args.show || args.stop) {
        auto p = agent.run(std::string(args.show ? "show" : "stop") + gc);
        if (!p) return p.error();
        return print_table(args, *p);
    }
    auto started = agent.run(start);
    if (!started) return started.error();
    if (!args.json)
        std::fprintf(stderr, "heapd: sampling process %d for %g s every %s (Ctrl-C ends it early)\n", args.pid,
                     args.seconds, text::human_bytes(static_cast<std::uint64_t>(args.interval)).c_str());
    sleep_unless_interrupted(args.seconds);
    auto p = agent.run("stop" + gc);
    if (!p) return p.error();
    return print_table(args, *p);
}

}  // namespace

void add_sites(CLI::App& app, int& status) {
    auto args = std::make_shared<sites_args>();
    CLI::App* sub = app.add_subcommand(
        "sites",
        "Where a running JVM allocates: samples its allocations (JEP 331) with heapd's agent and ranks the sites");
    sub->add_option("pid", args->pid, "Process id")->required()->check(CLI::PositiveNumber);
    sub->add_option("--seconds", args->seconds, "Sample for this long, then print the table")
        ->check(CLI::PositiveNumber & CLI::Range(0.0, wire::max_sampling_seconds))
        ->capture_default_str();
    sub->add_flag("--start", args->start, "Start sampling and return; the agent samples until --stop");
    sub->add_flag("--show", args->show, "Print the table of a sampling started with --start; it goes on");
    sub->add_flag("--stop", args->stop, "Stop a sampling started with --start and print its table");
    sub->add_flag("--status", args->status, "Say whether the JVM is being sampled");
    sub->add_option("--interval", args->interval, "Bytes allocated per thread between samples, on average")
        ->check(CLI::Range(std::int64_t{0}, wire::max_sampling_interval))
        ->capture_default_str();
    sub->add_option("--depth", args->depth, "Frames per site: sampled (when starting) and shown")
        ->check(CLI::Range(wire::min_sampling_depth, wire::max_sampling_depth))
        ->capture_default_str();
    sub->add_option("--by", args->by, "Rows per site (class and stack), allocating method, or class")
        ->check(CLI::IsMember({"site", "method", "class"}))
        ->capture_default_str();
    sub->add_option("--order", args->order, "Rank by live or allocated bytes")
        ->check(CLI::IsMember({"live", "allocated"}))
        ->capture_default_str();
    sub->add_option("--cutoff", args->cutoff, "Leave out rows below this share of the ranked bytes (0 to 1)")
        ->check(CLI::Range(wire::min_sites_cutoff, wire::max_sites_cutoff))
        ->capture_default_str();
    sub->add_option("--top", args->top, "At most this many rows (0: all above the cutoff)")->capture_default_str();
    sub->add_flag("--no-gc", args->no_gc,
                  "Do not run a full collection before counting live objects (live then means not yet collected)");
    sub->add_flag("--json", args->json, "Print JSON for machines");
    sub->add_option("--save", args->save,
                    "Also write the agent's answer to this new file, for `heapd analyze DUMP --sites FILE`");
    sub->add_option("--agent", args->agent, "The agent library (default: beside heapd, else where it is installed)");
    sub->add_option("--timeout", args->timeout_seconds, "Seconds to attach and for the agent to answer")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    sub->footer(
        "Estimates: a sample of s bytes stands for s/p bytes and 1/p objects, p = 1 - exp(-s/interval).\n"
        "Exit status: 0 done, 1 usage, 2 no usable agent library, 3 the JVM or the agent refused (sampling\n"
        "  held by another agent, not sampling, agent loading disabled), 4 no conversation with the JVM");
    sub->callback([args, &status] { status = run_sites(*args); });
}

}  // namespace heapd::daemon
