#pragma once
// What heapd tells the host's log pipeline about each report it keeps: one structured journal entry
// per finished dump or analysis, with heapd's MESSAGE_ID and fields a fleet selects and charts on
// (docs/operations.md, "Journal events").
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/store/entry_metadata.h"
#include "formats/report/report.h"

namespace heapd::daemon {

// MESSAGE_ID of a report kept in the store (journalctl MESSAGE_ID=...).
inline constexpr std::string_view report_stored_message_id = "838bc2aa119b48cfa35c7c425bf5fb0b";

// The facts of one kept report that its journal entry carries. Text from the dump or the JVM
// (class names, the command) is made safe for a terminal and bounded when the fields are written.
struct report_event {
    std::string dump_id;  // the store entry
    std::uint64_t job = 0;
    std::string trigger;   // "oom", "request", "rule NAME", "heapctl report", ...
    std::string oom_kind;  // the OutOfMemoryError heapd's agent saw: "direct-buffer", ...; "" for others
    std::string source;    // "dump" (the dump is kept) or "file" (a file analyzed in place)
    std::string host;
    std::int64_t pid = 0;  // the JVM's, 0 when unknown
    std::string main_class;
    // Its container (entry_metadata::container): the label people call it by, and Kubernetes' names.
    std::string container, pod, pod_namespace;
    std::string jvm_version;
    std::uint64_t dump_bytes = 0;
    std::uint64_t heap_bytes = 0;  // shallow bytes of every object in the dump
    std::uint64_t objects = 0;
    std::uint64_t reachable_bytes = 0;  // 0 when retention was not computed
    std::string headline;               // the store entry's one line
    // The top leak suspect, when there is one.
    std::string suspect_class;
    std::uint64_t suspect_retained_bytes = 0;
    double suspect_share = 0;  // of the reachable bytes, 0 to 1
};

// The main class or jar of a JVM's command as hsperfdata keeps it (sun.rt.javaCommand: the main
// class or jar and its arguments): its first word; "" for none.
std::string main_class_of_command(std::string_view command);

report_event make_report_event(const entry_metadata& meta, const analysis_report& report);

// The entry's fields, "NAME=value" each (sd_journal_sendv(3)): MESSAGE, MESSAGE_ID, PRIORITY
// (warning for a dump taken at an OutOfMemoryError, notice otherwise) and HEAPD_*.
std::vector<std::string> journal_fields(const report_event& e);

// Sends the entry to the journal; false when there is none to take it (no journald on the host).
bool send_to_journal(const report_event& e);

}  // namespace heapd::daemon
