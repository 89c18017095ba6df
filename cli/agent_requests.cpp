// heapctl sites PID and heapctl cpu PID: where a JVM allocates, and where it spends CPU, sampled by
// heapd's agent, which the daemon loads into the JVM (for whoever may dump it). By default samples
// for --seconds and prints the table; --start, --show, --stop (and for sites --status) work on a
// sampling that outlives the command.
#include <cerrno>
#include <cstdlib>
#include <expected>
#include <functional>
#include <string>
#include <utility>

#include "base/interruptible_sleep.h"
#include "base/safe_text.h"
#include "cli/command_line.h"
#include "formats/report/cpu_report.h"
#include "formats/report/quantities.h"
#include "formats/report/sites_report.h"
#include "formats/wire/sampling_limits.h"

namespace heapd::cli {
namespace {

// A number option's value within [low, high], else nothing (and the complaint printed).
std::optional<double> number(const std::string& flag, const std::string& text, double low, double high) {
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno != 0 || !(v >= low && v <= high)) {
        complain(flag + " needs a number from " + heapd::text::fmt("%g", low) + " to " + heapd::text::fmt("%g", high) +
                     ", not \"" + text + "\"",
                 usage);
        return std::nullopt;
    }
    return v;
}

int print_table(const options& o, const wire::json& result, int pid) {
    auto it = result.find("table");
    if (it == result.end()) return complain("heapd's reply has no table", protocol_mismatch);
    if (o.json) {
        print_json(*it);
        return ok;
    }
    auto table = sites_report_from_json(*it);
    if (!table) return complain("heapd's table cannot be read: " + table.error().message, protocol_mismatch);
    print("Process " + std::to_string(pid) + "\n" + render_sites_text(*table));
    return ok;
}

// heapctl cpu's stacks: the daemon's ranked CPU samples, as text or JSON.
int print_cpu(const options& o, const wire::json& result, int pid) {
    auto it = result.find("cpu");
    if (it == result.end()) return complain("heapd's reply has no CPU samples", protocol_mismatch);
    if (o.json) {
        print_json(*it);
        return ok;
    }
    auto samples = cpu_report_from_json(*it);
    if (!samples) return complain("heapd's CPU samples cannot be read: " + samples.error().message, protocol_mismatch);
    print("Process " + std::to_string(pid) + "\n" + render_cpu_text(*samples));
    return ok;
}

// What the command line asks of a sampling.
struct sampling_request {
    int pid = 0;
    double seconds = 10;
    std::string action;  // start, show, stop, status; empty: sample for `seconds`
    wire::json args = wire::json::object();
};

// The bounds of a number option: [low, high].
std::pair<double, double> bounds_of(const std::string& flag) {
    if (flag == "--seconds") return {0, wire::max_sampling_seconds};
    if (flag == "--interval") return {0, static_cast<double>(wire::max_sampling_interval)};
    if (flag == "--depth") return {wire::min_sampling_depth, wire::max_sampling_depth};
    if (flag == "--period") return {wire::min_cpu_period_ms, wire::max_cpu_period_ms};
    return {wire::min_sites_cutoff, wire::max_sites_cutoff};  // --cutoff
}

// heapctl sites PID [--seconds N | --start | --show | --stop | --status] [--interval B] [--depth N]
//   [--by site|method|class] [--order live|allocated] [--cutoff R] [--no-gc]
// heapctl cpu PID [--seconds N | --start | --show | --stop] [--period MS] [--depth N]
// The request, or the exit status of a complaint already printed.
std::expected<sampling_request, exit_code> parse_sampling(const options& o, bool cpu) {
    sampling_request r;
    std::optional<int> pid;
    bool gc = true;
    for (std::size_t i = 1; i < o.words.size(); ++i) {
        const std::string& w = o.words[i];
        auto value = [&]() -> std::optional<std::string> {
            if (i + 1 < o.words.size()) return o.words[++i];
            complain(w + " needs a value", usage);
            return std::nullopt;
        };
        if (w == "--start" || w == "--show" || w == "--stop" || (w == "--status" && !cpu)) {
            if (!r.action.empty())
                return std::unexpected(complain("--start, --show, --stop and --status go alone", usage));
            r.action = w.substr(2);
        } else if (w == "--no-gc" && !cpu) {
            gc = false;
        } else if (w == "--seconds" || w == "--depth" ||
                   (cpu ? w == "--period" : w == "--interval" || w == "--cutoff")) {
            auto v = value();
            if (!v) return std::unexpected(usage);
            const auto [low, high] = bounds_of(w);
            auto n = number(w, *v, low, high);
            if (!n) return std::unexpected(usage);
            if (w == "--seconds")
                r.seconds = *n;
            else if (w == "--cutoff")
                r.args["cutoff"] = *n;
            else
                r.args[w.substr(2)] = static_cast<std::uint64_t>(*n);
        } else if (!cpu && (w == "--by" || w == "--order")) {
            auto v = value();
            if (!v) return std::unexpected(usage);
            r.args[w.substr(2)] = *v;
        } else if (!pid && is_pid(w)) {
            pid = std::atoi(w.c_str());
        } else {
            return std::unexpected(complain(o.words[0] + ": unexpected " + w + " (see heapctl --help)", usage));
        }
    }
    if (!pid) return std::unexpected(complain(o.words[0] + " needs a PID (see heapctl --help)", usage));
    r.pid = *pid;
    r.args["pid"] = *pid;
    r.args["gc"] = gc;
    if (o.top) r.args["top"] = *o.top;
    return r;
}

// One `sites` request with this action (cpu_ACTION for CPU samples).
using sampling_call = std::function<std::expected<wire::json, client_error>(const std::string& action)>;

// Samples for the seconds asked (Ctrl-C ends it early): start, wait, stop; the stop's answer.
std::expected<wire::json, client_error> sample_for(const sampling_request& r, const sampling_call& call) {
    auto started = call("start");
    if (!started) return started;
    sleep_unless_interrupted(r.seconds);
    return call("stop");
}

// heapctl cpu: start, show, stop, or sample for the seconds asked and print the stacks.
int cpu_command(const options& o, const sampling_request& r, const sampling_call& call) {
    if (r.action == "start") {
        auto result = call("start");
        if (!result) return complain(result.error());
        if (o.json) {
            print_json(*result);
            return ok;
        }
        print(heapd::text::fmt("process %d: CPU samples every %d ms\n", r.pid, result->value("cpu_period_ms", 0)));
        return ok;
    }
    auto result = r.action.empty() ? sample_for(r, call) : call(r.action);
    if (!result) return complain(result.error());
    return print_cpu(o, *result, r.pid);
}

// heapctl sites --status and --start: whether the JVM is sampled, and how.
int print_sampling_state(const options& o, const sampling_request& r, const wire::json& result) {
    if (o.json) {
        print_json(result);
        return ok;
    }
    const bool sampling = result.value("sampling", false);
    const auto interval = result.value("interval", std::uint64_t{0});
    std::string line = "process " + std::to_string(r.pid) + ": ";
    if (!sampling)
        line += "not sampling";
    else
        line += heapd::text::fmt("sampling every %s, %d frames", text::human_bytes(interval).c_str(),
                                 result.value("depth", 0)) +
                (r.action == "status" ? heapd::text::fmt(", for %.1f s", result.value("seconds", 0.0)) : std::string());
    print(line + " (agent " + terminal_safe(result.value("agent", std::string("?"))) + ")\n");
    return ok;
}

}  // namespace

int sites(const options& o) {
    const bool cpu = o.words[0] == "cpu";
    auto request = parse_sampling(o, cpu);
    if (!request) return request.error();
    const sampling_request& r = *request;
    auto client = daemon_client::connect(o.socket);
    if (!client) return complain(client.error());
    const sampling_call call = [&](const std::string& what) {
        wire::json a = r.args;
        a["action"] = cpu ? "cpu_" + what : what;
        return client->call("sites", a);
    };
    if (cpu) return cpu_command(o, r, call);
    if (r.action == "status" || r.action == "start") {
        auto result = call(r.action);
        if (!result) return complain(result.error());
        return print_sampling_state(o, r, *result);
    }
    auto result = r.action.empty() ? sample_for(r, call) : call(r.action);  // show, stop, or a sampling of its own
    if (!result) return complain(result.error());
    return print_table(o, *result, r.pid);
}

}  // namespace heapd::cli
