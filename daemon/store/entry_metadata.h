#pragma once
// What the store keeps about one dump or analyzed file, and its JSON form (metadata.json).
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "base/error.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {

// One entry of the store: where it came from, whose it is, and what it holds.
struct entry_metadata {
    std::string id;
    std::int64_t created_ms = 0;  // by the wall clock, for people: it may step back or forward
    // The store's count of entries staged when this one was (1, 2, ...; 0 for entries of stores
    // before it): the order of entries, whatever the clock did.
    std::uint64_t sequence = 0;
    uid_t owner_uid = 0;  // who may see it besides root and the heapd group
    gid_t owner_gid = 0;
    std::string trigger;  // "heapctl report"; for dumps "request" (heapctl dump) or "oom" (the hook)
    // An OOM dump asked for by heapd's agent at an error the hook does not see: "direct-buffer",
    // "native-thread" or "thrown", and the agent's words on the error (the JVM's, untrusted).
    std::string oom_kind, oom_error;
    std::string source;  // "file": analyzed in place from a descriptor, the dump not kept; "dump"
    std::string file;    // the dump's name as the client gave it
    std::uint64_t file_bytes = 0;
    std::string host;
    std::int64_t pid = 0;  // the JVM's, 0 when unknown (or only claimed)
    // An adopted dump of a process that was gone: the pid its owner said it came from, which nothing
    // verified (0: none). Such an entry is its owner's file, never a dump of that pid's JVM.
    std::int64_t claimed_pid = 0;
    std::uint64_t jvm_start_time = 0;  // the JVM process's start time (clock ticks after boot), 0 when unknown
    std::string jvm;                   // the JVM's version, when known
    std::string command_line;          // the JVM's command line, when known
    // The JVM's container as the daemon named it (daemon/jvms/container_identity.h: runtime, id,
    // name, hostname, pod, namespace, label, workload), {} on the host or when unknown.
    wire::json container = wire::json::object();
    std::uint64_t job = 0;           // the job that made it
    std::string oom_request;         // the OOM intake's key of the request it answers (oom_intake.h)
    bool has_dump = false;           // dump.hprof is in the entry
    bool has_report = false;         // report.json is in the entry
    std::string headline;            // one line on what fills the heap (the top leak suspect)
    std::string damage;              // what a start found missing of it ("dump.hprof was missing"), or ""
    std::uint64_t stored_bytes = 0;  // bytes the entry takes on disk (measured, not stored)
};

// True when a was made after b: by sequence (entries of older stores, without one, come first), then
// by wall-clock time, then by id.
bool made_after(const entry_metadata& a, const entry_metadata& b);

wire::json to_json(const entry_metadata& m);
// Fails with corrupt when a required key is missing or has the wrong type.
result<entry_metadata> metadata_from_json(const wire::json& j);

}  // namespace heapd::daemon
