// `heapd jvms`: the JVMs of this host and of its containers, found without attaching, each with
// what its hsperfdata says: main class, version, heap, old generation, GC time, out-of-memory settings.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attach/jvm_discovery.h"
#include "attach/process_info.h"
#include "base/safe_text.h"
#include "daemon/commands/commands.h"
#include "daemon/jvms/container_identity.h"
#include "daemon/jvms/jvm_facts.h"
#include "daemon/jvms/memory_probe.h"
#include "daemon/rules/rule_match.h"
#include "formats/hsperf/hsperfdata_summary.h"
#include "formats/memory/memory_report.h"
#include "formats/report/jvm_table.h"
#include "formats/report/quantities.h"

namespace heapd::daemon {
namespace {

// The options of one jvms invocation.
struct jvms_args {
    bool json = false;
};

// Reads a JVM's facts into memory, never mapped: a file its owner cuts short would kill heapd with
// SIGBUS. A JVM that is starting may be adding a counter as it is read: read again after a moment.
daemon::jvm_facts read_row(const attach::discovered_jvm& j) {
    daemon::jvm_facts f = daemon::read_jvm_facts(j);
    for (int attempt = 1; attempt < 3 && !f.summary && !f.gone; ++attempt) {
        ::usleep(20000);
        f = daemon::read_jvm_facts(j);
    }
    return f;
}

std::string percent(std::optional<double> share, int decimals) {
    if (!share) return "-";
    return text::percent_text(*share * 100.0, decimals);
}

std::string oom_text(const oom_settings& o) {
    std::string out;
    auto add = [&](bool on, const char* word) {
        if (on) out += (out.empty() ? "" : ",") + std::string(word);
    };
    add(o.heap_dump, "dump");
    add(!o.on_error.empty(), "run");
    add(o.exit, "exit");
    add(o.crash, "crash");
    return out.empty() ? "-" : out;
}

std::string size_text(std::int64_t bytes) {
    return bytes > 0 ? text::human_bytes(static_cast<std::uint64_t>(bytes)) : "-";
}

// "host", or the container by the name its runtime or Kubernetes gave it ("container" when unknown).
std::string where_text(const attach::discovered_jvm& j) {
    if (!j.in_container) return "host";
    auto info = attach::read_process_info(j.pid);
    const std::string label = info ? daemon::container_of(j.pid, info->start_time).label() : std::string();
    return label.empty() ? "container" : line_safe(label);
}

std::string render_table(const std::vector<daemon::jvm_facts>& rows, std::size_t unreadable) {
    using text::jvm_column;
    std::vector<text::jvm_table_row> table;
    for (const auto& r : rows) {
        const auto& j = r.jvm;
        text::jvm_table_row t;
        t.pid = j.pid;
        t.ns_pid = j.ns_pid == j.pid ? "-" : std::to_string(j.ns_pid);
        // A JVM without hsperfdata has no user name of its own: the uid's, here.
        t.user = !j.user.empty() ? j.user : daemon::user_name_of(j.uid);
        t.where = where_text(j);
        t.heap_used = t.heap_max = t.old_gen = t.gc_time = t.on_oom = t.version = "?";
        const auto memory = daemon::glance_memory(j.pid);
        t.memory = memory ? rss_limit_cell(memory->resident, memory->limit.bytes, memory->limit.by_cgroup) : "-";
        if (r.summary) {
            const auto& s = *r.summary;
            t.heap_used = text::human_bytes(static_cast<std::uint64_t>(std::max<std::int64_t>(s.heap.used, 0)));
            t.heap_max = size_text(s.heap.max_capacity);
            t.old_gen = percent(s.old_gen ? s.old_gen->occupancy() : std::nullopt, 1);
            t.gc_time = percent(s.gc_time_share, 2);
            t.on_oom = oom_text(s.oom);
            t.version = s.vm_version.empty() ? "-" : s.vm_version;
            t.main_class = !s.accessible ? "(starting) " + s.main_class : s.main_class.empty() ? "-" : s.main_class;
        } else if (j.perfdata_path.empty()) {
            // No hsperfdata (-XX:+PerfDisableSharedMem, -XX:-UsePerfData): its command line.
            const std::string main_class = daemon::main_class_of(daemon::command_line_of(j.pid));
            t.on_oom = oom_text(daemon::oom_settings_of(r));
            t.main_class = main_class.empty() ? "(no hsperfdata)" : main_class + " (no hsperfdata)";
        } else {
            t.main_class = "(unreadable)";
        }
        table.push_back(std::move(t));
    }
    std::string out =
        text::jvm_table_text({jvm_column::pid, jvm_column::ns_pid, jvm_column::user, jvm_column::where,
                              jvm_column::heap_used, jvm_column::heap_max, jvm_column::memory, jvm_column::old_gen,
                              jvm_column::gc_time, jvm_column::on_oom, jvm_column::version, jvm_column::main_class},
                             table);
    for (const auto& r : rows)
        if (!r.summary && !r.jvm.perfdata_path.empty())
            out += "pid " + std::to_string(r.jvm.pid) + ": " + r.problem + "\n";
    if (rows.empty()) out += "no JVMs found\n";
    if (unreadable > 0)
        out += std::to_string(unreadable) +
               " hsperfdata file(s) of processes this user may not inspect were left out (run as root)\n";
    return out;
}

nlohmann::json usage_json(const hsperf_heap_usage& u) {
    nlohmann::json j = {{"used", u.used}, {"capacity", u.capacity}, {"max", u.max_capacity}};
    auto occ = u.occupancy();
    j["occupancy"] = occ ? nlohmann::json(*occ) : nlohmann::json(nullptr);
    return j;
}

nlohmann::json row_json(const daemon::jvm_facts& r) {
    const auto& j = r.jvm;
    nlohmann::json out = {{"pid", j.pid},
                          {"ns_pid", j.ns_pid},
                          {"user", j.user},
                          {"uid", j.uid},
                          {"in_container", j.in_container},
                          {"mount_ns", j.mount_ns},
                          {"pid_ns", j.pid_ns},
                          {"perfdata", j.perfdata_path}};
    if (j.in_container)
        if (auto info = attach::read_process_info(j.pid))
            out["container"] = nlohmann::json(daemon::to_json(daemon::container_of(j.pid, info->start_time)));
    if (const auto memory = daemon::glance_memory(j.pid)) out["memory"] = nlohmann::json(daemon::to_json(*memory));
    if (!r.summary) {
        out["error"] = r.problem;
        if (j.perfdata_path.empty()) out["main_class"] = daemon::main_class_of(daemon::command_line_of(j.pid));
        return out;
    }
    const auto& s = *r.summary;
    out["starting"] = !s.accessible;
    out["main_class"] = s.main_class;
    out["command"] = s.command;
    out["vm_version"] = s.vm_version;
    out["vm_args"] = s.vm_args;
    out["vm_flags"] = s.vm_flags;
    out["gc_policy"] = s.gc_policy;
    out["heap"] = usage_json(s.heap);
    out["old_gen"] = s.old_gen ? usage_json(*s.old_gen) : nlohmann::json(nullptr);
    nlohmann::json gens = nlohmann::json::array();
    for (const auto& g : s.generations) {
        nlohmann::json spaces = nlohmann::json::array();
        for (const auto& sp : g.spaces)
            spaces.push_back(
                {{"name", sp.name}, {"used", sp.used}, {"capacity", sp.capacity}, {"max", sp.max_capacity}});
        gens.push_back({{"index", g.index},
                        {"name", g.name},
                        {"used", g.used()},
                        {"capacity", g.capacity},
                        {"max", g.max_capacity},
                        {"spaces", spaces}});
    }
    out["generations"] = gens;
    nlohmann::json collectors = nlohmann::json::array();
    for (const auto& c : s.collectors)
        collectors.push_back(
            {{"index", c.index}, {"name", c.name}, {"invocations", c.invocations}, {"time_seconds", c.seconds}});
    out["gc"] = {{"time_seconds", s.gc_seconds},
                 {"uptime_seconds", s.uptime_seconds},
                 {"time_share", s.gc_time_share ? nlohmann::json(*s.gc_time_share) : nlohmann::json(nullptr)},
                 {"last_cause", s.last_cause},
                 {"collectors", collectors}};
    out["oom"] = {{"heap_dump_on_oom", s.oom.heap_dump},
                  {"heap_dump_path", s.oom.heap_dump_path},
                  {"on_out_of_memory_error", s.oom.on_error},
                  {"exit_on_oom", s.oom.exit},
                  {"crash_on_oom", s.oom.crash}};
    return out;
}

int run_jvms(const jvms_args& a) {
    auto found = attach::discover_jvms();
    if (!found) {
        std::fprintf(stderr, "heapd: %s\n", found.error().message.c_str());
        return bad_input;
    }
    std::vector<daemon::jvm_facts> rows;
    for (const auto& j : found->jvms) {
        daemon::jvm_facts row = read_row(j);
        if (!row.summary && row.gone) continue;  // exited since it was found
        rows.push_back(std::move(row));
    }
    std::string text;
    if (a.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& r : rows) list.push_back(row_json(r));
        nlohmann::json doc = {{"jvms", list}, {"unreadable", found->unreadable}};
        text = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    } else {
        text = render_table(rows, found->unreadable);
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    return ok;
}

}  // namespace

void add_jvms(CLI::App& app, int& status) {
    auto args = std::make_shared<jvms_args>();
    CLI::App* sub = app.add_subcommand("jvms", "List the JVMs of this host and its containers, without attaching");
    sub->add_flag("--json", args->json, "Print JSON for machines");
    sub->callback([args, &status] { status = run_jvms(*args); });
}

}  // namespace heapd::daemon
