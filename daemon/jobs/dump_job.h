#pragma once
// The dump job: a running JVM's heap dumped through attach (or a dump the JVM already wrote, passed
// as a descriptor) into a store entry, owned by root and the store's group with mode 0640, then
// analyzed in a child process like any other dump, its report kept beside it. When heapd's agent
// samples the JVM's allocations (formats/sites), its table is kept too (sites.json) and the report's
// suspects say where their objects were allocated.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "base/unique_fd.h"
#include "daemon/jobs/job_manager.h"
#include "daemon/store/store.h"

namespace heapd::daemon {

// What to dump, why, and for whom.
struct dump_request {
    pid_t pid = 0;
    bool live = true;                 // only reachable objects (a full GC first)
    std::string trigger = "request";  // "request", "oom", "spool"
    std::string oom_kind, oom_error;  // an OOM the agent saw (entry_metadata)
    // The JVM is in its OnOutOfMemoryError hook (at a safepoint, unable to answer): retry attaching
    // with backoff until it answers again or is gone.
    bool wait_for_jvm = false;
    // The JVM is held in its hook with no dump of its own (it was not armed): take a core of it now
    // and convert that (attach/process_snapshot.h); progress "convert" tells the hook it may go.
    bool snapshot = false;
    std::string exe;  // the JVM's executable, for the snapshot's conversion
    // A JVM that cannot be dumped through attach (-XX:+DisableAttachMechanism, a listener that does
    // not answer) is snapshotted the same way instead, when this names its executable.
    std::string fallback_exe;
    std::optional<unique_fd> adopt;  // a dump the JVM wrote itself (HeapDumpOnOutOfMemoryError)
    std::string adopt_name;          // its path, for people
    std::uint64_t estimate = 0;      // the heap's used bytes (hsperfdata), for the free-space guard
    uid_t uid = 0;                   // the entry's owner: the JVM's user
    gid_t gid = 0;
    std::string host;
    std::string jvm;                              // the JVM's version, when known
    std::string command_line;                     // the JVM's command, when known
    std::optional<std::uint64_t> start_time;      // the JVM's start time, to notice a reused pid
    wire::json container = wire::json::object();  // its container (container_identity.h), {} on the host
    // An adopted dump that nothing verified to be pid's (the process was gone): kept as its owner's
    // file, pid only as what they claimed (entry_metadata::claimed_pid), no OOM table taken for it.
    bool claimed = false;
    std::string oom_request;  // the OOM intake's key of the request (entry_metadata::oom_request)
    // Run on the job's thread once its entry is in place, before the job is done (heapd's armed
    // file removed, say).
    std::function<void()> after_commit;
    std::string executable = "/proc/self/exe";  // the heapd that runs the analysis process
};

// How long an OOM dump waits at most for the JVM to come out of its hook.
inline constexpr std::int64_t oom_wait_limit_ms = 10 * 60 * 1000;
// ... but a JVM that is stopped (SIGSTOP, a tracer) holds its worker no longer than this: it
// answers nothing until someone continues it, and no OutOfMemoryError hook stops a JVM so.
inline constexpr std::int64_t oom_wait_stopped_ms = 30 * 1000;

// How long a dump through attach may take in all, however its file grows meanwhile: a JVM (or
// someone answering for it) that writes a byte now and then holds its job no longer.
inline constexpr std::int64_t dump_conversation_limit_ms = 60 * 60 * 1000;

// How long a snapshot may take: gdb writing the core (the JVM held), then jhsdb converting it.
inline constexpr std::int64_t snapshot_limit_s = 300;
inline constexpr std::int64_t conversion_limit_s = 1800;

// The work of one dump: free-space guard, wait for the JVM (OOM), dump or adopt into a staged
// entry, analyze it in a child process, keep dump, report and metadata.
job_work make_dump_work(store& s, dump_request request);

}  // namespace heapd::daemon
