#include "daemon/events/death_event.h"

#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>

#include "daemon/runtime/log_text.h"

namespace heapd::daemon {
std::vector<std::string> journal_fields(const death_record& r, const std::string& record_id) {
    const bool alarm = r.verdict.cause == death_cause::oom_kill || r.verdict.cause == death_cause::crashed;
    std::string who = "JVM " + std::to_string(r.pid);
    if (!r.main_class.empty()) who += " (" + bounded_text(r.main_class, journal_text_bytes) + ")";
    const std::string container = r.container.is_object() ? r.container.value("label", std::string()) : "";
    if (!container.empty()) who += " in container " + bounded_text(container, journal_text_bytes);
    std::vector<std::string> f = {
        "MESSAGE=" + who + " " + bounded_text(death_headline(r), journal_text_bytes) + ": " +
            bounded_text(r.verdict.evidence, journal_text_bytes),
        "MESSAGE_ID=" + std::string(jvm_died_message_id),
        "SYSLOG_IDENTIFIER=heapd",
        "PRIORITY=" + std::to_string(alarm ? LOG_WARNING : LOG_NOTICE),
        "HEAPD_PID=" + std::to_string(r.pid),
        "HEAPD_CAUSE=" + std::string(death_cause_name(r.verdict.cause)),
        "HEAPD_HOST=" + bounded_text(r.host, journal_text_bytes),
    };
    if (r.status.known && r.status.signal != 0) f.push_back("HEAPD_SIGNAL=" + signal_name(r.status.signal));
    if (r.status.known && r.status.signal == 0) f.push_back("HEAPD_EXIT_CODE=" + std::to_string(r.status.code));
    if (!r.main_class.empty()) f.push_back("HEAPD_MAIN_CLASS=" + bounded_text(r.main_class, journal_text_bytes));
    if (!container.empty()) {
        f.push_back("HEAPD_CONTAINER=" + bounded_text(container, journal_text_bytes));
        for (const auto& [key, field] :
             {std::pair<const char*, const char*>{"pod", "HEAPD_POD="}, {"namespace", "HEAPD_NAMESPACE="}})
            if (const std::string v = r.container.value(key, std::string()); !v.empty())
                f.push_back(field + bounded_text(v, journal_text_bytes));
    }
    if (r.last_resident) f.push_back("HEAPD_RESIDENT_BYTES=" + std::to_string(*r.last_resident));
    if (r.limit.bytes) f.push_back("HEAPD_LIMIT_BYTES=" + std::to_string(*r.limit.bytes));
    if (r.limit.by_cgroup) f.push_back("HEAPD_CGROUP=" + bounded_text(r.limit.source, journal_text_bytes));
    if (!record_id.empty()) f.push_back("HEAPD_DEATH_ID=" + record_id);
    if (!r.kept.empty()) f.push_back("HEAPD_DUMP_ID=" + r.kept.front());
    return f;
}

bool send_journal_fields(std::vector<std::string> fields) {
    std::vector<iovec> iov;
    iov.reserve(fields.size());
    for (std::string& f : fields) iov.push_back(iovec{f.data(), f.size()});
    return sd_journal_sendv(iov.data(), static_cast<int>(iov.size())) == 0;
}

}  // namespace heapd::daemon
