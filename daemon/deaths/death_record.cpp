#include "daemon/deaths/death_record.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "formats/memory/memory_report.h"
#include "formats/report/quantities.h"

namespace heapd::daemon {
namespace {

// A signal the process raised on itself, or the kernel sent it for a fault: a crash.
bool crash_signal(int s) {
    return s == SIGSEGV || s == SIGBUS || s == SIGABRT || s == SIGILL || s == SIGFPE || s == SIGSYS || s == SIGTRAP;
}

std::string count_change(std::int64_t before, std::int64_t after) {
    return "rose from " + std::to_string(before) + " to " + std::to_string(after);
}

std::string bytes_text(std::int64_t bytes) {
    return text::human_bytes(static_cast<std::uint64_t>(std::max<std::int64_t>(bytes, 0)));
}

std::string share_text(std::int64_t part, std::int64_t whole) {
    char share[32];
    std::snprintf(share, sizeof share, "%.0f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
    return share;
}

std::string status_text(const exit_status& s) {
    if (!s.known) return "exit status unknown";
    if (s.signal != 0) return signal_name(s.signal) + (s.core_dumped ? " (core dumped)" : "");
    return "exit code " + std::to_string(s.code);
}

}  // namespace

std::string_view death_cause_name(death_cause c) {
    switch (c) {
    case death_cause::oom_kill: return "oom_kill";
    case death_cause::killed: return "killed";
    case death_cause::crashed: return "crashed";
    case death_cause::stopped: return "stopped";
    case death_cause::exited: return "exited";
    case death_cause::failed: return "failed";
    case death_cause::unknown: return "unknown";
    }
    return "unknown";
}

bool worth_keeping(death_cause c) { return c != death_cause::exited && c != death_cause::stopped; }

std::string signal_name(int signal) {
    if (const char* name = ::sigabbrev_np(signal)) return "SIG" + std::string(name);
    return "signal " + std::to_string(signal);
}

death_verdict judge_death(const death_facts& f) {
    const exit_status& s = f.status;
    const bool sigkill_or_unknown = !s.known || s.signal == SIGKILL;
    // The OOM killer's victim is counted in its memory cgroup; a count that rose while the JVM died
    // of a SIGKILL (or of what no one could read) names it.
    if (sigkill_or_unknown && f.cgroup_oom_before && f.cgroup_oom_after && *f.cgroup_oom_after > *f.cgroup_oom_before)
        return {death_cause::oom_kill, std::string(s.known ? "SIGKILL" : "exit status unknown") +
                                           "; the OOM kill count of its memory cgroup (" + f.cgroup + ") " +
                                           count_change(*f.cgroup_oom_before, *f.cgroup_oom_after)};
    if (s.known && s.signal == SIGKILL) {
        if (!f.cgroup_oom_after && f.host_oom_before && f.host_oom_after && *f.host_oom_after > *f.host_oom_before)
            return {death_cause::oom_kill, "SIGKILL; no memory cgroup of its own, and the host's OOM kill count " +
                                               count_change(*f.host_oom_before, *f.host_oom_after) +
                                               " meanwhile (another process may have been the one killed)"};
        std::string why = "SIGKILL, not from the OOM killer";
        if (f.cgroup_oom_after)
            why += " (its memory cgroup's OOM kill count stayed at " + std::to_string(*f.cgroup_oom_after) + ")";
        else if (f.host_oom_after)
            why += " (the host's OOM kill count stayed at " + std::to_string(*f.host_oom_after) + ")";
        return {death_cause::killed, why};
    }
    if (!s.known)
        return {death_cause::unknown,
                "its parent reaped it before its exit status could be read (Linux before 6.15 keeps it for no one "
                "else); no OOM kill counted in its memory cgroup"};
    if (s.signal != 0) return {crash_signal(s.signal) ? death_cause::crashed : death_cause::killed, status_text(s)};
    if (s.code == 0) return {death_cause::exited, "exit code 0"};
    if (s.code == 128 + SIGTERM || s.code == 128 + SIGINT || s.code == 128 + SIGHUP)
        return {death_cause::stopped, "exit code " + std::to_string(s.code) + ": the JVM stopped on " +
                                          signal_name(s.code - 128) + " (its shutdown hooks ran)"};
    return {death_cause::failed, "exit code " + std::to_string(s.code)};
}

std::string death_headline(const death_record& r) {
    std::string line;
    switch (r.verdict.cause) {
    case death_cause::oom_kill: line = "killed by the kernel's OOM killer"; break;
    case death_cause::killed: line = "killed by " + status_text(r.status); break;
    case death_cause::crashed: line = "crashed: " + status_text(r.status); break;
    case death_cause::stopped: line = "stopped (" + status_text(r.status) + ")"; break;
    case death_cause::exited: line = "exited"; break;
    case death_cause::failed: line = "exited with " + status_text(r.status); break;
    case death_cause::unknown: line = "ended; exit status unknown"; break;
    }
    if (!r.last_resident) return line;
    char before[32];
    std::snprintf(before, sizeof before, "%.1f s",
                  static_cast<double>(std::max<std::int64_t>(r.died_ms - r.last_seen_ms, 0)) / 1000);
    line += "; last seen " + std::string(before) + " before at " + bytes_text(*r.last_resident) + " resident";
    if (!r.limit.bytes || *r.limit.bytes <= 0) return line;
    if (!r.limit.by_cgroup)
        return line + " (" + share_text(*r.last_resident, *r.limit.bytes) + " of the host's memory)";
    // What the limit holds is the cgroup's charge, which leaves out the shared pages (libraries)
    // other cgroups were charged for and counts the page cache: the figure the kernel killed at.
    if (r.limit.cgroup_usage)
        return line + ", its memory cgroup at " + bytes_text(*r.limit.cgroup_usage) + " (" +
               share_text(*r.limit.cgroup_usage, *r.limit.bytes) + ") of its " + bytes_text(*r.limit.bytes) +
               " limit (" + r.limit.source + ")";
    return line + " (" + share_text(*r.last_resident, *r.limit.bytes) + ") of its " + bytes_text(*r.limit.bytes) +
           " limit (" + r.limit.source + ")";
}

wire::json to_json(const death_record& r) {
    wire::json status = {{"known", r.status.known}, {"source", r.status.source}};
    if (r.status.known) {
        status["code"] = r.status.code;
        status["signal"] = r.status.signal;
        if (r.status.signal != 0) status["signal_name"] = signal_name(r.status.signal);
        status["core_dumped"] = r.status.core_dumped;
    }
    wire::json limit = {{"source", r.limit.source}, {"by_cgroup", r.limit.by_cgroup}};
    if (r.limit.bytes) limit["bytes"] = *r.limit.bytes;
    if (r.limit.oom_kills) limit["oom_kills"] = *r.limit.oom_kills;
    if (r.limit.cgroup_usage) limit["cgroup_usage"] = *r.limit.cgroup_usage;
    wire::json j = {{"host", r.host},
                    {"pid", r.pid},
                    {"start_time", r.start_time},
                    {"uid", r.uid},
                    {"gid", r.gid},
                    {"main_class", r.main_class},
                    {"jvm", r.jvm},
                    {"command_line", r.command_line},
                    {"started_ms", r.started_ms},
                    {"died_ms", r.died_ms},
                    {"status", std::move(status)},
                    {"cause", death_cause_name(r.verdict.cause)},
                    {"evidence", r.verdict.evidence},
                    {"headline", death_headline(r)},
                    {"limit", std::move(limit)},
                    {"kept", r.kept}};
    if (!r.oom_dump.empty()) j["oom_dump"] = r.oom_dump;
    if (r.container.is_object() && !r.container.empty()) j["container"] = r.container;
    if (r.last_resident) j["last"] = {{"resident", *r.last_resident}, {"at_ms", r.last_seen_ms}};
    if (r.breakdown) j["breakdown"] = to_json(*r.breakdown);
    return j;
}

}  // namespace heapd::daemon
