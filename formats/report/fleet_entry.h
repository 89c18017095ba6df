#pragma once
// One report as the fleet's view keeps it (`heapd fleet`): where and when it was taken, how big the
// heap was, and its leak suspects, each named by a leak signature that is the same on every host
// and in every dump of the same leak. `heapd upload` puts it beside each report as summary.json;
// it is made again from report.json for reports uploaded without one.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace report {

// A leak suspect as the fleet groups it.
struct fleet_suspect {
    std::string signature;   // 16 hex digits naming the signature text (leak_signature_id)
    std::string class_name;  // the suspect's class, or the class whose instances together are one
    std::string held_in;     // the class of the accumulation point
    std::string path;        // the signature's path: root kinds and steps, one line
    bool is_class = false;   // instances of one class together
    std::uint64_t retained_bytes = 0;
    double share = 0;  // of the reachable bytes
};

// One report of one JVM.
struct fleet_entry {
    std::string key;  // where it lies: PREFIX/HOST/SERVICE/ID (no trailing '/')
    std::string id;   // the dump id on its host
    std::string host;
    std::string service;  // as the key names it: the pod's workload, the container's name, else the main class or jar
    // The JVM's container as people call it ("NAMESPACE/POD/CONTAINER", a runtime's name), its pod
    // and namespace in Kubernetes; "" on a host (and in summaries written before they were kept).
    std::string container, pod, pod_namespace;
    std::int64_t pid = 0;              // 0 when unknown
    std::uint64_t jvm_start_time = 0;  // with host and pid, names one JVM; 0 when unknown
    std::int64_t time_ms = 0;          // when the report was made (else the dump's own time)
    std::string trigger;               // "oom", "request", "rule", ...; "" when unknown
    std::string oom_kind;              // for OOM dumps the agent caught: "direct-buffer", ...
    std::string jvm;                   // the JVM's version
    std::uint64_t reachable_bytes = 0, heap_bytes = 0, objects = 0;
    std::vector<fleet_suspect> suspects;  // as the report ranks them
};

// The text that names a leak: the suspect's class, where its memory accumulates, and the path from
// the GC root (root kinds, then each step's class and field), with ids, sizes, array indexes and
// lengths and chain lengths left out, and the names the JVM makes up at run time (lambda and
// proxy numbers, hidden classes' addresses, generated accessors) made the same in every JVM.
std::string leak_signature(const leak_suspect& s);
// 16 hex digits naming a signature text (SipHash-2-4 under a fixed key: the same in every release).
std::string leak_signature_id(std::string_view signature);
// A class name with run-time parts made stable: "Foo$$Lambda$14/0x0000000800c0b000" is
// "Foo$$Lambda$*", "jdk.proxy2.$Proxy12" is "jdk.proxy*.$Proxy*".
std::string stable_class_name(std::string_view name);

// What a fleet_entry holds of a report; key, id, host and service from where it lies, the rest from
// context (zeros and "" when unknown).
struct fleet_context {
    std::string key, id, host, service;
    std::int64_t pid = 0;
    std::uint64_t jvm_start_time = 0;
    std::int64_t created_ms = 0;
    std::string trigger, oom_kind, jvm;
    std::string container, pod, pod_namespace;
};
fleet_entry fleet_entry_of(const analysis_report& r, const fleet_context& context);
// The same from the text of a report.json from elsewhere (a report uploaded without a summary):
// refused with bad_value when it is not JSON or does not read as a report (report_from_json). Only
// what an entry holds is kept as it is parsed (the summary, reachability and leak suspects, at most
// max_report_values values of them, where a real report has a few hundred, and 256 keys an object;
// the other sections are never built, or left empty), so a crafted file costs little more memory
// than its bytes (a whole document is 28 times its text).
inline constexpr std::size_t max_report_values = 20'000;
result<fleet_entry> fleet_entry_of_report(std::string_view text, const fleet_context& context);

nlohmann::ordered_json to_json(const fleet_entry& e);
// Reads summary.json back; fails with bad_value naming the key that is missing or of the wrong type.
// Strings are bounded (4 KiB each) and suspects too (at most 64 kept); times are held to years 1970
// to 9999.
result<fleet_entry> fleet_entry_from_json(const nlohmann::ordered_json& j);

}  // namespace report
}  // namespace heapd
