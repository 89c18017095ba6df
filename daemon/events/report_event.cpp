#include "daemon/events/report_event.h"

#include <syslog.h>

#include <cstdio>

#include "daemon/events/death_event.h"
#include "daemon/runtime/log_text.h"
#include "formats/report/quantities.h"

namespace heapd::daemon {
namespace {

std::string share_text(double share) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", 100 * share);
    return text;
}

}  // namespace

std::string main_class_of_command(std::string_view command) {
    const std::size_t start = command.find_first_not_of(" \t");
    if (start == std::string_view::npos) return "";
    const std::size_t end = command.find_first_of(" \t", start);
    return std::string(command.substr(start, end == std::string_view::npos ? end : end - start));
}

report_event make_report_event(const entry_metadata& meta, const analysis_report& report) {
    report_event e;
    e.dump_id = meta.id;
    e.job = meta.job;
    e.trigger = meta.trigger;
    e.oom_kind = meta.oom_kind;
    e.source = meta.source;
    e.host = meta.host;
    e.pid = meta.pid;
    e.main_class = main_class_of_command(meta.command_line);
    if (meta.container.is_object()) {
        e.container = meta.container.value("label", std::string());
        e.pod = meta.container.value("pod", std::string());
        e.pod_namespace = meta.container.value("namespace", std::string());
    }
    e.jvm_version = meta.jvm.empty() ? report.summary.java_version : meta.jvm;
    e.dump_bytes = meta.file_bytes;
    e.heap_bytes = report.summary.shallow_bytes;
    e.objects = report.summary.instances + report.summary.object_arrays + report.summary.primitive_arrays;
    e.reachable_bytes = report.retention.computed ? report.retention.reachable_bytes : 0;
    e.headline = meta.headline;
    if (!report.retention.leak_suspects.empty()) {
        const leak_suspect& s = report.retention.leak_suspects.front();
        e.suspect_class = s.suspect.class_name;
        e.suspect_retained_bytes = s.retained_bytes;
        e.suspect_share = s.share;
    }
    return e;
}

std::vector<std::string> journal_fields(const report_event& e) {
    const bool oom = e.trigger == "oom";
    std::string who = e.pid > 0 ? "pid " + std::to_string(e.pid) : std::string("a file");
    if (!e.main_class.empty()) who += " (" + bounded_text(e.main_class, journal_text_bytes) + ")";
    if (!e.container.empty()) who += " in container " + bounded_text(e.container, journal_text_bytes);
    const std::string kind = e.oom_kind.empty() ? "" : " (" + bounded_text(e.oom_kind, journal_text_bytes) + ")";
    std::string message = (oom ? "OutOfMemoryError" + kind + ": dump " : "report of dump ") + e.dump_id + " of " + who +
                          ", trigger \"" + bounded_text(e.trigger, journal_text_bytes) + "\", heap " +
                          text::human_bytes(e.heap_bytes) + ": " + bounded_text(e.headline, journal_text_bytes);
    std::vector<std::string> f = {
        "MESSAGE=" + message,
        "MESSAGE_ID=" + std::string(report_stored_message_id),
        "SYSLOG_IDENTIFIER=heapd",
        "PRIORITY=" + std::to_string(oom ? LOG_WARNING : LOG_NOTICE),
        "HEAPD_DUMP_ID=" + e.dump_id,
        "HEAPD_JOB=" + std::to_string(e.job),
        "HEAPD_TRIGGER=" + bounded_text(e.trigger, journal_text_bytes),
        "HEAPD_SOURCE=" + e.source,
        "HEAPD_HOST=" + bounded_text(e.host, journal_text_bytes),
        "HEAPD_DUMP_BYTES=" + std::to_string(e.dump_bytes),
        "HEAPD_HEAP_BYTES=" + std::to_string(e.heap_bytes),
        "HEAPD_OBJECTS=" + std::to_string(e.objects),
    };
    if (!e.oom_kind.empty()) f.push_back("HEAPD_OOM_KIND=" + bounded_text(e.oom_kind, journal_text_bytes));
    if (e.pid > 0) f.push_back("HEAPD_PID=" + std::to_string(e.pid));
    if (!e.main_class.empty()) f.push_back("HEAPD_MAIN_CLASS=" + bounded_text(e.main_class, journal_text_bytes));
    if (!e.container.empty()) f.push_back("HEAPD_CONTAINER=" + bounded_text(e.container, journal_text_bytes));
    if (!e.pod.empty()) f.push_back("HEAPD_POD=" + bounded_text(e.pod, journal_text_bytes));
    if (!e.pod_namespace.empty()) f.push_back("HEAPD_NAMESPACE=" + bounded_text(e.pod_namespace, journal_text_bytes));
    if (!e.jvm_version.empty()) f.push_back("HEAPD_JVM_VERSION=" + bounded_text(e.jvm_version, journal_text_bytes));
    if (e.reachable_bytes > 0) f.push_back("HEAPD_REACHABLE_BYTES=" + std::to_string(e.reachable_bytes));
    if (!e.suspect_class.empty()) {
        f.push_back("HEAPD_SUSPECT_CLASS=" + bounded_text(e.suspect_class, journal_text_bytes));
        f.push_back("HEAPD_SUSPECT_RETAINED_BYTES=" + std::to_string(e.suspect_retained_bytes));
        f.push_back("HEAPD_SUSPECT_PERCENT=" + share_text(e.suspect_share));
    }
    return f;
}

bool send_to_journal(const report_event& e) { return send_journal_fields(journal_fields(e)); }

}  // namespace heapd::daemon
