#include "daemon/config/config_text.h"

#include <cstdio>
#include <map>

#include "daemon/config/config_values.h"
#include "formats/report/quantities.h"

namespace heapd::daemon {
namespace {

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

std::string plural(std::uint64_t n, const std::string& one, const std::string& many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string retention_text(const retention_policy& p) {
    return (p.max_count == 0 ? std::string("any number of dumps") : "at most " + plural(p.max_count, "dump", "dumps")) +
           ", " + (p.max_bytes == 0 ? std::string("no size limit") : "at most " + size_string(p.max_bytes)) + ", " +
           (p.max_age_days == 0 ? std::string("kept however old") : "for " + plural(p.max_age_days, "day", "days")) +
           (p.max_count_per_owner == 0 && p.max_bytes_per_owner == 0
                ? std::string()
                : ", each user at most " +
                      (p.max_count_per_owner != 0 ? plural(p.max_count_per_owner, "dump", "dumps") : std::string()) +
                      (p.max_count_per_owner != 0 && p.max_bytes_per_owner != 0 ? " and " : "") +
                      (p.max_bytes_per_owner != 0 ? size_string(p.max_bytes_per_owner) : std::string()));
}

bool same_rule(const dump_rule& a, const dump_rule& b) {
    return a.select.main_class == b.select.main_class && a.select.command == b.select.command &&
           a.select.user == b.select.user && a.select.container == b.select.container && a.every == b.every &&
           a.old_gen_percent == b.old_gen_percent && a.old_gen_collections == b.old_gen_collections &&
           a.gc_time_percent == b.gc_time_percent && a.gc_window == b.gc_window &&
           a.predict_full_within == b.predict_full_within && a.predict_window == b.predict_window &&
           a.memory_percent == b.memory_percent && a.memory_polls == b.memory_polls &&
           a.memory_full_within == b.memory_full_within && a.memory_window == b.memory_window &&
           a.cooldown == b.cooldown && a.max_dumps == b.max_dumps && a.live == b.live && a.action == b.action &&
           a.sample_interval == b.sample_interval && a.sample_depth == b.sample_depth;
}

// Appends "name before -> after" to out when they differ.
template <class T, class Show>
void compare(std::vector<std::string>& out, const char* name, const T& before, const T& after, Show show) {
    if (!(before == after)) out.push_back(std::string(name) + " " + show(before) + " -> " + show(after));
}

}  // namespace

std::string describe_selector(const jvm_selector& s) {
    std::vector<std::string> parts;
    if (!s.main_class.empty()) parts.push_back("main class " + s.main_class);
    if (!s.command.empty()) parts.push_back("command /" + s.command + "/");
    if (!s.user.empty()) parts.push_back("user " + s.user);
    if (s.container) parts.push_back(*s.container ? "in a container" : "on the host");
    if (!s.container_name.empty()) parts.push_back("container " + s.container_name);
    if (!s.pod.empty()) parts.push_back("pod " + s.pod);
    if (!s.pod_namespace.empty()) parts.push_back("namespace " + s.pod_namespace);
    if (parts.empty()) return "every JVM";
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
    return out;
}

std::string describe_arming(const oom_options& o) {
    const std::string when =
        ", looked for every " + duration_string(o.poll_interval) + ", checked every " + duration_string(o.recheck);
    switch (o.arm) {
    case arm_mode::none: return "no arming";
    case arm_mode::hooked: return "arming JVMs whose OnOutOfMemoryError runs heapd" + when;
    case arm_mode::all:
        return (o.select.empty() ? "arming every JVM"
                                 : "arming the JVMs selected below and those whose hook runs heapd") +
               when + "; the daemon collects the dumps of those without the hook";
    }
    return "?";
}

std::string describe_triggers(const dump_rule& r) {
    std::vector<std::string> parts;
    if (r.every) parts.push_back("every " + duration_string(*r.every));
    if (r.old_gen_percent)
        parts.push_back("old gen above " + text::round_percent(*r.old_gen_percent) + " after collections" +
                        (r.old_gen_collections == 1
                             ? std::string()
                             : ", " + std::to_string(r.old_gen_collections) + " measurements in a row"));
    if (r.gc_time_percent)
        parts.push_back("GC time above " + text::round_percent(*r.gc_time_percent) + " over " +
                        duration_string(r.gc_window));
    if (r.predict_full_within)
        parts.push_back("old gen predicted full within " + duration_string(*r.predict_full_within) + " (trend over " +
                        duration_string(r.predict_window) + ")");
    if (r.memory_percent)
        parts.push_back(
            "resident memory above " + text::round_percent(*r.memory_percent) + " of its limit" +
            (r.memory_polls == 1 ? std::string() : ", " + std::to_string(r.memory_polls) + " polls in a row"));
    if (r.memory_full_within)
        parts.push_back("resident memory predicted at its limit within " + duration_string(*r.memory_full_within) +
                        " (trend over " + duration_string(r.memory_window) + ")");
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
    return out.empty() ? "never" : out;
}

std::string describe_limits(const dump_rule& r) {
    if (r.action == rule_action::sample)
        return "samples allocations every " + size_string(static_cast<std::uint64_t>(r.sample_interval)) + ", " +
               std::to_string(r.sample_depth) + " frames; cooldown " + duration_string(r.cooldown) + ", " +
               (r.max_dumps == 0 ? std::string("no limit of starts per JVM")
                                 : "at most " + plural(r.max_dumps, "start", "starts") + " per JVM");
    return "cooldown " + duration_string(r.cooldown) + ", " +
           (r.max_dumps == 0 ? std::string("no limit of dumps per JVM")
                             : "at most " + plural(r.max_dumps, "dump", "dumps") + " per JVM") +
           (r.live ? ", live objects only" : ", all objects");
}

std::vector<std::string> config_summary(const heapd_config& c) {
    const serve_options& s = c.serve;
    std::vector<std::string> out;
    out.push_back("socket     " + s.socket_path);
    out.push_back("store      " + s.store_dir + ", " + retention_text(s.retention) + ", leaving " +
                  size_string(s.reserve.floor) + " or " + std::to_string(s.reserve.percent) + "% of its disk free");
    out.push_back("spool      " + (s.spool_dir.empty() ? std::string("none") : s.spool_dir));
    out.push_back("group      " + s.group);
    out.push_back("workers    " + std::to_string(s.workers) + ", at most " + std::to_string(s.max_connections) +
                  " clients (" + std::to_string(s.max_connections_per_user) + " per user), idle " +
                  duration_string(s.idle_timeout) + ", " + duration_string(s.shutdown_grace) + " to stop" +
                  (s.analysis_memory != 0 ? ", analyses in " + size_string(s.analysis_memory) : std::string()));
    out.push_back("metrics    " + (c.metrics.textfile.empty()
                                       ? std::string("no textfile")
                                       : c.metrics.textfile + " every " + duration_string(c.metrics.interval)));
    out.push_back("oom        " + describe_arming(c.oom));
    for (const jvm_selector& s : c.oom.arm == arm_mode::all ? c.oom.select : std::vector<jvm_selector>{})
        out.push_back("  JVMs     " + describe_selector(s));
    out.push_back("rules      " + (c.rules.empty() ? std::string("none")
                                                   : std::to_string(c.rules.size()) + ", JVMs read every " +
                                                         duration_string(c.poll_interval)));
    for (const dump_rule& r : c.rules) {
        out.push_back("rule " + in_quotes(r.name) + (r.line > 0 ? " (line " + std::to_string(r.line) + ")" : ""));
        out.push_back("  JVMs     " + describe_selector(r.select));
        out.push_back("  when     " + describe_triggers(r));
        out.push_back("  limits   " + describe_limits(r));
    }
    return out;
}

config_changes compare_configs(const heapd_config& running, const heapd_config& next) {
    config_changes out;
    const serve_options &a = running.serve, &b = next.serve;
    auto text = [](const std::string& s) { return in_quotes(s); };
    auto number = [](auto n) { return std::to_string(n); };
    auto duration = [](auto d) { return duration_string(std::chrono::duration_cast<std::chrono::milliseconds>(d)); };
    compare(out.need_restart, "daemon.socket", a.socket_path, b.socket_path, text);
    compare(out.need_restart, "daemon.store", a.store_dir, b.store_dir, text);
    compare(out.need_restart, "daemon.spool", a.spool_dir, b.spool_dir, text);
    compare(out.need_restart, "daemon.group", a.group, b.group, text);
    compare(out.need_restart, "daemon.workers", a.workers, b.workers, number);
    compare(out.need_restart, "daemon.agent_library", a.agent_library, b.agent_library, text);
    compare(out.need_restart, "daemon.disk_reserve", a.reserve.floor, b.reserve.floor,
            [](std::uint64_t n) { return size_string(n); });
    compare(out.need_restart, "daemon.disk_reserve_percent", a.reserve.percent, b.reserve.percent, number);
    compare(out.live, "daemon.poll_interval", running.poll_interval, next.poll_interval, duration);
    compare(out.live, "daemon.max_connections", a.max_connections, b.max_connections, number);
    compare(out.live, "daemon.max_connections_per_user", a.max_connections_per_user, b.max_connections_per_user,
            number);
    compare(out.live, "daemon.idle_timeout", a.idle_timeout, b.idle_timeout, duration);
    compare(out.live, "daemon.analysis_memory", a.analysis_memory, b.analysis_memory,
            [](std::uint64_t n) { return size_string(n); });
    compare(out.live, "daemon.shutdown_grace", a.shutdown_grace, b.shutdown_grace, duration);
    compare(out.live, "retention.keep_count", a.retention.max_count, b.retention.max_count, number);
    compare(out.live, "retention.keep_count_per_user", a.retention.max_count_per_owner, b.retention.max_count_per_owner,
            number);
    compare(out.live, "retention.keep_bytes_per_user", a.retention.max_bytes_per_owner, b.retention.max_bytes_per_owner,
            [](std::uint64_t n) { return size_string(n); });
    compare(out.live, "retention.keep_bytes", a.retention.max_bytes, b.retention.max_bytes,
            [](std::uint64_t n) { return size_string(n); });
    compare(out.live, "retention.keep_days", a.retention.max_age_days, b.retention.max_age_days, number);
    compare(out.live, "metrics.textfile", running.metrics.textfile, next.metrics.textfile, text);
    compare(out.live, "metrics.interval", running.metrics.interval, next.metrics.interval, duration);
    compare(out.live, "oom.arm", running.oom.arm, next.oom.arm,
            [](arm_mode m) { return std::string(arm_mode_name(m)); });
    {
        std::string before, after;
        for (const jvm_selector& s : running.oom.select) before += "; " + describe_selector(s);
        for (const jvm_selector& s : next.oom.select) after += "; " + describe_selector(s);
        compare(out.live, "oom.select", before, after,
                [](const std::string& v) { return v.empty() ? std::string("none") : v.substr(2); });
    }
    compare(out.live, "oom.poll_interval", running.oom.poll_interval, next.oom.poll_interval, duration);
    compare(out.live, "oom.recheck", running.oom.recheck, next.oom.recheck, duration);

    std::map<std::string, const dump_rule*> before;
    for (const dump_rule& r : running.rules) before[r.name] = &r;
    std::vector<std::string> added, changed, removed;
    for (const dump_rule& r : next.rules) {
        auto it = before.find(r.name);
        if (it == before.end())
            added.push_back(in_quotes(r.name));
        else if (!same_rule(*it->second, r))
            changed.push_back(in_quotes(r.name));
        if (it != before.end()) before.erase(it);
    }
    for (const auto& [name, rule] : before) removed.push_back(in_quotes(name));
    auto list = [](const std::vector<std::string>& names) {
        std::string s;
        for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
        return s;
    };
    if (!added.empty()) out.live.push_back("rule added: " + list(added));
    if (!changed.empty()) out.live.push_back("rule changed: " + list(changed));
    if (!removed.empty()) out.live.push_back("rule removed: " + list(removed));
    return out;
}

}  // namespace heapd::daemon
