// heapctl sites PID and heapctl cpu PID: where a JVM allocates, and where it spends CPU, sampled by
// heapd's agent, which the daemon loads into the JVM (for whoever may dump it). By default samples
// for --seconds and prints the table; --start, --show, --stop (and for sites --status) work on a
// sampling that outlives the command.
#include <cerrno>
#include <cstdlib>
#include <string>

#include "base/interruptible_sleep.h"
#include "base/safe_text.h"
#include "cli/command_line.h"
#include "formats/report/cpu_report.h"
#include "formats/report/sites_report.h"
#include "formats/report/text_format.h"

namespace heapd::ctl {
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

}  // namespace

int sites(const options& o) {
    // heapctl sites PID [--seconds N | --start | --show | --stop | --status] [--interval B] [--depth N]
    //   [--by site|method|class] [--order live|allocated] [--cutoff R] [--no-gc]
    // heapctl cpu PID [--seconds N | --start | --show | --stop] [--period MS] [--depth N]
    const bool cpu = o.words[0] == "cpu";
    std::optional<int> pid;
    double seconds = 10;
    std::string action;
    wire::json args = wire::json::object();
    bool gc = true;
    for (std::size_t i = 1; i < o.words.size(); ++i) {
        const std::string& w = o.words[i];
        auto value = [&]() -> std::optional<std::string> {
            if (i + 1 < o.words.size()) return o.words[++i];
            complain(w + " needs a value", usage);
            return std::nullopt;
        };
        if (w == "--start" || w == "--show" || w == "--stop" || (w == "--status" && !cpu)) {
            if (!action.empty()) return complain("--start, --show, --stop and --status go alone", usage);
            action = w.substr(2);
        } else if (w == "--no-gc" && !cpu) {
            gc = false;
        } else if (w == "--seconds" || w == "--depth" ||
                   (cpu ? w == "--period" : w == "--interval" || w == "--cutoff")) {
            auto v = value();
            if (!v) return usage;
            const double high = w == "--seconds"    ? 86400
                                : w == "--interval" ? 2147483647
                                : w == "--depth"    ? 64
                                : w == "--period"   ? 1000
                                                    : 1;
            auto n = number(w, *v, w == "--depth" || w == "--period" ? 1 : 0, high);
            if (!n) return usage;
            if (w == "--seconds")
                seconds = *n;
            else if (w == "--cutoff")
                args["cutoff"] = *n;
            else
                args[w.substr(2)] = static_cast<std::uint64_t>(*n);
        } else if (!cpu && (w == "--by" || w == "--order")) {
            auto v = value();
            if (!v) return usage;
            args[w.substr(2)] = *v;
        } else if (!pid && is_pid(w)) {
            pid = std::atoi(w.c_str());
        } else {
            return complain(o.words[0] + ": unexpected " + w + " (see heapctl --help)", usage);
        }
    }
    if (!pid) return complain(o.words[0] + " needs a PID (see heapctl --help)", usage);
    args["pid"] = *pid;
    args["gc"] = gc;
    if (o.top) args["top"] = *o.top;
    auto client = daemon_client::connect(o.socket);
    if (!client) return complain(client.error());
    auto call = [&](const std::string& what) {
        wire::json a = args;
        a["action"] = cpu ? "cpu_" + what : what;
        return client->call("sites", a);
    };
    if (cpu) {
        if (action == "start") {
            auto result = call("start");
            if (!result) return complain(result.error());
            if (o.json) {
                print_json(*result);
                return ok;
            }
            print(heapd::text::fmt("process %d: CPU samples every %d ms\n", *pid, result->value("cpu_period_ms", 0)));
            return ok;
        }
        if (!action.empty()) {
            auto result = call(action);
            if (!result) return complain(result.error());
            return print_cpu(o, *result, *pid);
        }
        auto started = call("start");
        if (!started) return complain(started.error());
        sleep_unless_interrupted(seconds);
        auto result = call("stop");
        if (!result) return complain(result.error());
        return print_cpu(o, *result, *pid);
    }
    if (action == "status" || action == "start") {
        auto result = call(action);
        if (!result) return complain(result.error());
        if (o.json) {
            print_json(*result);
            return ok;
        }
        const bool sampling = result->value("sampling", false);
        const auto interval = result->value("interval", std::uint64_t{0});
        std::string line = "process " + std::to_string(*pid) + ": ";
        if (!sampling)
            line += "not sampling";
        else
            line +=
                heapd::text::fmt("sampling every %s, %d frames", human_bytes(interval).c_str(),
                                 result->value("depth", 0)) +
                (action == "status" ? heapd::text::fmt(", for %.1f s", result->value("seconds", 0.0)) : std::string());
        print(line + " (agent " + terminal_safe(result->value("agent", std::string("?"))) + ")\n");
        return ok;
    }
    if (action == "show" || action == "stop") {
        auto result = call(action);
        if (!result) return complain(result.error());
        return print_table(o, *result, *pid);
    }
    auto started = call("start");
    if (!started) return complain(started.error());
    sleep_unless_interrupted(seconds);
    auto result = call("stop");
    if (!result) return complain(result.error());
    return print_table(o, *result, *pid);
}

}  // namespace heapd::ctl
