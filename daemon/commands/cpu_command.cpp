// `heapd cpu PID`: where a running JVM spends its CPU, as hprof's cpu=samples showed it: heapd's
// agent takes the stacks of the threads running Java code at every tick; by default for --seconds,
// then the stacks are ranked. --start, --show and --stop work on a sampling that outlives the command.
#include <cstdio>
#include <memory>
#include <string>

#include "attach/agent_control.h"
#include "base/interruptible_sleep.h"
#include "daemon/commands/agent_call.h"
#include "daemon/commands/commands.h"
#include "formats/report/cpu_report.h"
#include "formats/sites/cpu_ranking.h"
#include "formats/wire/sampling_limits.h"

namespace heapd::daemon {
namespace {

// The options of one cpu invocation.
struct cpu_args {
    int pid = 0;
    double seconds = 10;
    bool start = false, show = false, stop = false;
    int period_ms = 10;
    int depth = 16;
    unsigned top = 20;
    bool json = false;
    std::string agent;
    double timeout_seconds = 30;
};

int print_samples(const cpu_args& args, const sites::allocation_profile& profile) {
    cpu_report r = sites::rank_cpu(profile, args.depth, args.top);
    if (args.json) {
        nlohmann::ordered_json j = to_json(r);
        j["pid"] = args.pid;
        std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
        std::printf("Process %d\n%s", args.pid, render_cpu_text(r).c_str());
    }
    return ok;
}

int run_cpu(const cpu_args& args) {
    if (int(args.start) + int(args.show) + int(args.stop) > 1) {
        std::fprintf(stderr, "heapd: cpu: --start, --show and --stop go alone\n");
        return usage;
    }
    auto library = attach::find_agent_library(args.agent);
    if (!library) {
        std::fprintf(stderr, "heapd: cpu: %s\n", library.error().message.c_str());
        return bad_input;
    }
    agent_call agent{"cpu", args.pid, *library, args.timeout_seconds, {}};
    const std::string start =
        "cpu_start,period=" + std::to_string(args.period_ms) + ",depth=" + std::to_string(args.depth);
    if (args.start) {
        auto p = agent.run(start);
        if (!p) return p.error();
        std::printf("process %d: CPU samples every %d ms, %d frames; `heapd cpu %d --show` or `--stop` for them\n",
                    args.pid, p->cpu_period_ms, args.depth, args.pid);
        return ok;
    }
    if (args.show || args.stop) {
        auto p = agent.run(args.show ? "cpu_show" : "cpu_stop");
        if (!p) return p.error();
        return print_samples(args, *p);
    }
    auto started = agent.run(start);
    if (!started) return started.error();
    if (!args.json)
        std::fprintf(stderr, "heapd: CPU samples of process %d for %g s every %d ms (Ctrl-C ends it early)\n", args.pid,
                     args.seconds, args.period_ms);
    sleep_unless_interrupted(args.seconds);
    auto p = agent.run("cpu_stop");
    if (!p) return p.error();
    return print_samples(args, *p);
}

}  // namespace

void add_cpu(CLI::App& app, int& status) {
    auto args = std::make_shared<cpu_args>();
    CLI::App* sub = app.add_subcommand(
        "cpu", "Where a running JVM spends its CPU: heapd's agent samples the stacks of threads running Java code");
    sub->add_option("pid", args->pid, "Process id")->required()->check(CLI::PositiveNumber);
    sub->add_option("--seconds", args->seconds, "Sample for this long, then print the stacks")
        ->check(CLI::PositiveNumber & CLI::Range(0.0, wire::max_sampling_seconds))
        ->capture_default_str();
    sub->add_flag("--start", args->start, "Start sampling and return; the agent samples until --stop");
    sub->add_flag("--show", args->show, "Print the stacks of a sampling started with --start; it goes on");
    sub->add_flag("--stop", args->stop, "Stop a sampling started with --start and print its stacks");
    sub->add_option("--period", args->period_ms, "Milliseconds between samples")
        ->check(CLI::Range(wire::min_cpu_period_ms, wire::max_cpu_period_ms))
        ->capture_default_str();
    sub->add_option("--depth", args->depth, "Frames per stack: sampled (when starting) and shown")
        ->check(CLI::Range(wire::min_sampling_depth, wire::max_sampling_depth))
        ->capture_default_str();
    sub->add_option("--top", args->top, "At most this many stacks (0: all)")->capture_default_str();
    sub->add_flag("--json", args->json, "Print JSON for machines");
    sub->add_option("--agent", args->agent, "The agent library (default: beside heapd, else where it is installed)");
    sub->add_option("--timeout", args->timeout_seconds, "Seconds to attach and for the agent to answer")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    sub->footer(
        "Safepoint-biased, as hprof's cpu=samples: each tick stops the JVM and takes the stacks where threads\n"
        "stopped. Exit status: 0 done, 1 usage, 2 no usable agent library, 3 the JVM or the agent refused,\n"
        "  4 no conversation with the JVM");
    sub->callback([args, &status] { status = run_cpu(*args); });
}

}  // namespace heapd::daemon
