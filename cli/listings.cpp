#include "cli/listings.h"

#include <pwd.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "base/safe_text.h"
#include "formats/memory/memory_report.h"
#include "formats/report/jvm_table.h"
#include "formats/report/quantities.h"

namespace heapd::cli {
namespace {

// A field of a reply, or a fallback when it is missing or of another type (replies are
// checked as messages, not field by field: a missing field shows as the fallback).
template <class T>
T get(const wire::json& j, const char* key, T fallback) {
    auto it = j.find(key);
    if (it == j.end()) return fallback;
    try {
        return it->get<T>();
    } catch (...) {
        return fallback;
    }
}

std::string fit(std::string s, std::size_t width) {
    if (s.size() <= width) return s;
    return width > 3 ? "..." + s.substr(s.size() - (width - 3)) : s.substr(0, width);
}

// text after indent, broken between words so lines stay under 100 columns.
std::string wrapped(const std::string& indent, const std::string& text) {
    std::string out, line = indent;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find(' ', pos);
        if (end == std::string::npos) end = text.size();
        const std::string word = text.substr(pos, end - pos);
        if (line.size() > indent.size() && line.size() + 1 + word.size() > 99) {
            out += line + "\n";
            line = indent + "  ";
        }
        line += (line.size() > indent.size() && !line.ends_with(' ') ? " " : "") + word;
        pos = end + 1;
    }
    return out + line + "\n";
}

}  // namespace

std::string user_name(long long uid) {
    if (uid >= 0)
        if (passwd* pw = ::getpwuid(static_cast<uid_t>(uid))) return pw->pw_name;
    return std::to_string(uid);
}

std::string status_text(const wire::json& s) {
    const wire::json store = get(s, "store", wire::json::object());
    const wire::json jobs = get(s, "jobs", wire::json::object());
    const wire::json you = get(s, "you", wire::json::object());
    std::string out = "heapd " + get<std::string>(s, "version", "?") + " on " + get<std::string>(s, "host", "?") +
                      ", pid " + std::to_string(get<long long>(s, "pid", 0)) + ", up " +
                      text::duration_text(get<long long>(s, "uptime_ms", 0)) + ", protocol " +
                      std::to_string(get<long long>(s, "protocol", 0)) + "\n";
    out += "  Socket   " + get<std::string>(s, "socket", "?") + "\n";
    const auto dumps = get<unsigned long long>(store, "dumps", 0);
    out += "  Store    " + get<std::string>(store, "path", "?") + ": " + std::to_string(dumps) +
           (dumps == 1 ? " dump, " : " dumps, ") + text::human_bytes(get<unsigned long long>(store, "bytes", 0)) + "\n";
    out += "  Jobs     " + std::to_string(get<long long>(jobs, "running", 0)) + " running, " +
           std::to_string(get<long long>(jobs, "queued", 0)) + " queued, " +
           std::to_string(get<long long>(s, "workers", 0)) + " at a time\n";
    const long long uid = get<long long>(you, "uid", -1);
    out +=
        "  You      " + user_name(uid) + " (uid " + std::to_string(uid) + "): " +
        (get<bool>(you, "admin", false) ? "may act on every dump and job\n" : "may act on your own dumps and jobs\n");
    return out;
}

std::string jobs_text(const wire::json& jobs) {
    if (!jobs.is_array() || jobs.empty()) return "no jobs\n";
    char line[256];
    std::snprintf(line, sizeof line, "%6s  %-9s  %-7s  %-10s  %-18s  %8s  %s\n", "Job", "State", "Kind", "Owner",
                  "Phase", "Time", "File");
    std::string out = line;
    for (const wire::json& j : jobs) {
        const std::string state = get<std::string>(j, "state", "?");
        std::string phase = get<std::string>(j, "phase", "");
        const auto done = get<unsigned long long>(j, "done", 0), total = get<unsigned long long>(j, "total", 0);
        if (state == "running" && total > 0) {
            std::snprintf(line, sizeof line, " %.0f%%", 100.0 * static_cast<double>(done) / static_cast<double>(total));
            phase += line;
        } else if (state != "running") {
            phase = state == "queued" ? "waiting" : "";
        }
        std::string subject = line_safe(get<std::string>(j, "subject", ""));
        std::snprintf(line, sizeof line, "%6llu  %-9s  %-7s  %-10s  %-18s  %8s  %s\n",
                      get<unsigned long long>(j, "id", 0), state.c_str(), get<std::string>(j, "kind", "").c_str(),
                      fit(user_name(get<long long>(j, "owner_uid", -1)), 10).c_str(), fit(phase, 18).c_str(),
                      text::duration_text(get<long long>(j, "duration_ms", 0)).c_str(), fit(subject, 34).c_str());
        out += line;
        if (const std::string entry = get<std::string>(j, "entry", ""); !entry.empty())
            out += std::string(get<std::string>(j, "kind", "") == "path" ? "        answer kept with dump "
                                                                         : "        report kept as dump ") +
                   entry + "\n";
        if (const std::string error = get<std::string>(j, "error", ""); !error.empty())
            out += "        " + line_safe(error) + "\n";
    }
    return out;
}

std::string container_label(const wire::json& item) {
    auto c = item.find("container");
    if (c == item.end() || !c->is_object()) return "";
    return line_safe(get<std::string>(*c, "label", ""));
}

std::string dumps_text(const wire::json& dumps) {
    if (!dumps.is_array() || dumps.empty()) return "no dumps\n";
    std::string out;
    for (const wire::json& d : dumps) {
        char line[512];
        const auto created = get<long long>(d, "created_ms", 0);
        std::snprintf(
            line, sizeof line, "%-20s  %s  %-10s  %9s  %s\n", get<std::string>(d, "id", "?").c_str(),
            text::utc_time(created < 0 ? 0 : static_cast<std::uint64_t>(created)).c_str(),
            fit(user_name(get<long long>(d, "owner_uid", -1)), 10).c_str(),
            text::human_bytes(get<unsigned long long>(d, "file_bytes", 0)).c_str(),
            line_safe(get<std::string>(d, "trigger", "") +
                      (get<std::string>(d, "oom_kind", "").empty() ? "" : " " + get<std::string>(d, "oom_kind", "")))
                .c_str());
        out += line;
        const char* what = get<bool>(d, "has_dump", false) ? " (dump kept)" : " (analyzed in place, report kept)";
        out += "    " + fit(line_safe(get<std::string>(d, "file", "")), 60) + what + "\n";
        if (const std::string label = container_label(d); !label.empty()) out += "    in container " + label + "\n";
        if (const std::string damage = get<std::string>(d, "damage", ""); !damage.empty())
            out += "    damaged: " + line_safe(damage) + "\n";
        out += wrapped("    ", line_safe(get<std::string>(d, "headline", "")));
    }
    return out;
}

std::string dumps_reply_text(const wire::json& reply) {
    std::string out = dumps_text(reply.value("dumps", wire::json::array()));
    const wire::json damaged = reply.value("damaged", wire::json::array());
    if (!damaged.is_array() || damaged.empty()) return out;
    out += "\ndamaged entries kept aside, whose owner is unknown (only root and the heapd group see them):\n";
    for (const wire::json& d : damaged)
        out +=
            wrapped("  ", line_safe(get<std::string>(d, "id", "?")) + ": " + line_safe(get<std::string>(d, "why", "")) +
                              "; its files are in " + line_safe(get<std::string>(d, "path", "")));
    return out;
}

namespace {

// The lines saying how many of each user's items a reply left out (fair_listing.h), "" for none.
std::string left_out_text(const wire::json& reply, const std::string& items) {
    std::string out;
    for (const wire::json& o : reply.value("left_out", wire::json::array()))
        out += std::to_string(get<long long>(o, "count", 0)) + " more " + items + " of " +
               user_name(get<long long>(o, "uid", -1)) +
               " not listed: one reply holds 8 MiB of them at most, each user's taken in turn\n";
    return out;
}

}  // namespace

std::string jvms_reply_text(const wire::json& reply) {
    return jvms_text(reply.value("jvms", wire::json::array())) + left_out_text(reply, "JVMs");
}

std::string deaths_reply_text(const wire::json& reply) {
    return deaths_text(reply.value("deaths", wire::json::array())) + left_out_text(reply, "death records");
}

std::string deaths_text(const wire::json& deaths) {
    if (!deaths.is_array() || deaths.empty()) return "no deaths of JVMs you may see were recorded\n";
    std::string out;
    for (const wire::json& item : deaths) {
        const wire::json d = item.value("death", wire::json::object());
        char line[512];
        const auto died = get<long long>(d, "died_ms", 0);
        std::snprintf(line, sizeof line, "%-28s  %s  %-10s  pid %lld %s\n", get<std::string>(item, "id", "?").c_str(),
                      text::utc_time(died < 0 ? 0 : static_cast<std::uint64_t>(died)).c_str(),
                      fit(user_name(get<long long>(d, "uid", -1)), 10).c_str(), get<long long>(d, "pid", 0),
                      fit(line_safe(get<std::string>(d, "main_class", "")), 40).c_str());
        out += line;
        if (const std::string label = container_label(d); !label.empty()) out += "    in container " + label + "\n";
        out += wrapped("    ", line_safe(get<std::string>(d, "headline", "")));
        out += wrapped("    ", "why: " + line_safe(get<std::string>(d, "evidence", "")));
        if (auto b = d.find("breakdown"); b != d.end())
            if (auto breakdown = breakdown_from_json(*b)) {
                const long long before = (died - breakdown->at_ms) / 1000;
                out += wrapped("    ", "last breakdown (" + std::to_string(before < 0 ? 0 : before) +
                                           " s before): " + largest_parts_text(*breakdown, 4));
            }
        if (const std::string oom = get<std::string>(d, "oom_dump", ""); !oom.empty())
            out += "    its OutOfMemoryError's dump: " + line_safe(oom) + " (heapctl report " + line_safe(oom) + ")\n";
        const wire::json kept = d.value("kept", wire::json::array());
        if (kept.is_array() && !kept.empty() && kept[0].is_string())
            out += "    kept before: " + std::to_string(kept.size()) + (kept.size() == 1 ? " dump" : " dumps") +
                   ", the last " + line_safe(kept[0].get<std::string>()) + " (heapctl report " +
                   line_safe(kept[0].get<std::string>()) + ")\n";
    }
    return out;
}

// The after-collection cell of a JVM's row: "61%", "61% steady", "61% full ~4m 10s", "-" before its
// first measurement, "unwatched" without hsperfdata.
std::string after_gc_cell(const wire::json& trend) {
    if (!trend.is_object() || trend.empty()) return "-";
    if (!get<bool>(trend, "watched", false)) return "unwatched";
    const wire::json after = trend.value("after_gc", wire::json::object());
    if (after.empty()) return "-";
    char cell[64];
    std::snprintf(cell, sizeof cell, "%.0f%%", get<double>(after, "percent", 0));
    const std::string state = get<std::string>(trend, "trend", "");
    if (state == "steady") return std::string(cell) + " steady";
    if (state == "rising")
        return std::string(cell) + " full ~" +
               text::duration_text(std::llround(get<double>(trend, "predicted_full_seconds", 0) * 1000));
    return cell;
}

std::string jvms_text(const wire::json& jvms) {
    if (!jvms.is_array() || jvms.empty()) return "no JVMs you may act on\n";
    std::vector<text::jvm_table_row> rows;
    for (const wire::json& j : jvms) {
        const wire::json heap = j.value("heap", wire::json::object());
        // Whether the daemon armed it for its OutOfMemoryError (only JVMs whose hook runs heapd).
        const std::string arming = get<std::string>(j.value("oom_arming", wire::json::object()), "state", "");
        text::jvm_table_row t;
        t.pid = get<long long>(j, "pid", 0);
        t.user = user_name(get<long long>(j, "uid", -1));
        // A container by the name its runtime or Kubernetes gave it, when the daemon could tell.
        const std::string label = container_label(j);
        t.where = !label.empty() ? label : get<bool>(j, "in_container", false) ? "container" : "host";
        t.heap_used = text::human_bytes(get<unsigned long long>(heap, "used", 0));
        t.heap_max = text::human_bytes(get<unsigned long long>(heap, "max", 0));
        const wire::json memory = j.value("memory", wire::json::object());
        t.memory = memory.contains("resident")
                       ? rss_limit_cell(get<long long>(memory, "resident", 0),
                                        memory.contains("limit")
                                            ? std::optional<std::int64_t>(get<long long>(memory, "limit", 0))
                                            : std::nullopt,
                                        get<bool>(memory, "by_cgroup", false))
                       : "-";
        t.after_gc = after_gc_cell(j.value("heap_trend", wire::json::object()));
        t.on_oom = arming == "armed"      ? "oom-armed"
                   : arming == "own_path" ? "oom-own"
                   : !arming.empty()      ? "oom-NOT"
                                          : "-";
        t.version = get<std::string>(j, "vm_version", "?");
        t.main_class = get<std::string>(j, "main_class", get<std::string>(j, "problem", ""));
        rows.push_back(std::move(t));
    }
    using text::jvm_column;
    std::string out = text::jvm_table_text(
        {jvm_column::pid, jvm_column::user, jvm_column::where, jvm_column::heap_used, jvm_column::heap_max,
         jvm_column::memory, jvm_column::after_gc, jvm_column::on_oom, jvm_column::version, jvm_column::main_class},
        rows);
    for (const wire::json& j : jvms) {
        const wire::json trend = j.value("heap_trend", wire::json::object());
        if (trend.is_object() && !get<std::string>(trend, "note", "").empty())
            out += "pid " + std::to_string(get<long long>(j, "pid", 0)) +
                   (get<bool>(trend, "watched", true) ? " is not measured: " : " is not watched: ") +
                   get<std::string>(trend, "note", "") + "\n";
        const wire::json arming = j.value("oom_arming", wire::json::object());
        if (get<std::string>(arming, "state", "") == "not_armed")
            out += "pid " + std::to_string(get<long long>(j, "pid", 0)) +
                   " is not armed for its OutOfMemoryError: " + get<std::string>(arming, "note", "") + "\n";
    }
    return out;
}

}  // namespace heapd::cli
