#pragma once
// What heapd keeps when a JVM it watched dies: how it ended (exit status or signal), why (the
// kernel's OOM killer at its memory cgroup's limit, a crash, a kill, a stop, an exit), its memory
// as last seen, and the store entries kept of it before. Kept in the store as death.json (an entry
// without a dump), listed by `heapctl deaths`.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/jvms/process_exit.h"
#include "formats/memory/jvm_memory.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {

// Why a JVM died, as heapd could tell.
enum class death_cause {
    oom_kill,  // SIGKILL from the kernel's OOM killer (its cgroup's OOM kill count rose)
    killed,    // another signal that ends a process, or a SIGKILL from anyone else
    crashed,   // SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGSYS, SIGTRAP
    stopped,   // exit code 128+SIGTERM/SIGINT/SIGHUP: the JVM ran its shutdown hooks on that signal
    exited,    // exit code 0
    failed,    // any other exit code
    unknown,   // its parent reaped it before heapd could read the status (a kernel before 6.15)
};
// "oom_kill", "killed", ... (the metric's label and the JSON's "cause").
std::string_view death_cause_name(death_cause c);
// Whether a death of this cause is kept in the store and journalled as news: not a clean exit or stop.
bool worth_keeping(death_cause c);

// What is known when a watched process has ended, to tell the cause by.
struct death_facts {
    exit_status status;
    // The OOM kill count of the JVM's memory cgroup (memory.oom_control / memory.events) when
    // last read while it ran, and after it died; absent where there is no such cgroup file.
    std::optional<std::int64_t> cgroup_oom_before, cgroup_oom_after;
    std::string cgroup;  // "cgroup v1 /shop", "" without one
    // The host's OOM kill count (/proc/vmstat oom_kill), for a JVM with no memory cgroup of its own.
    std::optional<std::int64_t> host_oom_before, host_oom_after;
};

// The cause and one sentence saying what it rests on.
struct death_verdict {
    death_cause cause = death_cause::unknown;
    std::string evidence;
};
death_verdict judge_death(const death_facts& f);

// "SIGKILL", "SIGSEGV", ... ("signal 42" for one without a name).
std::string signal_name(int signal);

// One JVM's death.
struct death_record {
    std::string host;
    pid_t pid = 0;                 // host pid
    std::uint64_t start_time = 0;  // clock ticks after boot: names the process with pid
    uid_t uid = 0;                 // whose JVM it was
    gid_t gid = 0;
    std::string main_class, jvm, command_line;
    wire::json container = wire::json::object();  // its container (container_identity.h), {} on the host
    std::int64_t started_ms = 0;                  // when heapd began watching it
    std::int64_t died_ms = 0;                     // when heapd saw it gone
    exit_status status;
    death_verdict verdict;
    // Its resident memory and limit when last glanced at (every poll), and when.
    std::optional<std::int64_t> last_resident;
    std::int64_t last_seen_ms = 0;
    memory_limit limit;
    // Its last breakdown read from /proc (no attach), when one was taken.
    std::optional<memory_breakdown> breakdown;
    std::vector<std::string> kept;  // ids of the store entries of this JVM kept before it died
    std::string oom_dump;           // the dump taken at its OutOfMemoryError, once kept (before or after)
};

// One line: "killed by the kernel's OOM killer; last seen 0.6 s before at 168 MiB resident, its
// memory cgroup at 149 MiB (75%) of its 200 MiB limit (cgroup v1 /shop)".
std::string death_headline(const death_record& r);

wire::json to_json(const death_record& r);

}  // namespace heapd::daemon
