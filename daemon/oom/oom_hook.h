#pragma once
// The OnOutOfMemoryError hook's work (`heapd dump PID`): the JVM runs it at a safepoint and waits,
// and may exit right after it (-XX:+ExitOnOutOfMemoryError). So the hook captures at once what the
// daemon will need (the JVM's version, command and start time; the dump the JVM has just written,
// opened: its own HeapDumpPath, or heapd's when the daemon armed it), hands it to the daemon over its
// socket (the dump as a descriptor), or spools it when no daemon acknowledges it in time. It
// removes nothing: the daemon keeps the request in its OOM intake and removes heapd's armed file
// once the dump's entry is kept. A JVM that wrote no dump is held while the daemon takes a
// snapshot of it from outside (bounded by --hold).
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "base/error.h"
#include "base/unique_fd.h"
#include "formats/hsperf/hsperfdata_summary.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {

// What the hook captured about the JVM before returning.
struct oom_capture {
    pid_t pid = 0;
    // The dump request's arguments (trigger oom, in_oom_hook, and a request_id that its spooled
    // copy shares, so that the daemon takes the request once however it reaches it).
    wire::json args = wire::json::object();
    std::optional<unique_fd> dump;  // the JVM's own dump, open for reading
};

// The newest of heapd's OOM dumps of the JVM (arm_jvm.h) in the directory dir (the JVM's /tmp,
// open for reading): a regular file owned by uid, opened without following a link; its name, or
// "" when there is none. At most max_entries names are looked at.
std::string find_armed_dump(int dir, pid_t ns_pid, std::uint64_t start_time, uid_t uid, unique_fd& out,
                            std::size_t max_entries = 1u << 20);

// The file HotSpot writes its OutOfMemoryError dump to, as the JVM names it: HeapDumpPath (a
// directory gets java_pid<ns_pid>.hprof inside), else java_pid<ns_pid>.hprof; relative to the JVM's
// working directory.
std::string oom_dump_name(const oom_settings& oom, pid_t ns_pid, bool path_is_directory);

// Reads the JVM's hsperfdata and opens the dump the JVM wrote before running its hook: at its own
// HeapDumpPath (through /proc/PID/root or /proc/PID/cwd, so a JVM in a container works too), else
// the one heapd armed it to write in its /tmp.
oom_capture capture_oom(pid_t pid);

// Sends the capture to the daemon at socket_path as a dump request (the dump as SCM_RIGHTS) and
// waits for its acknowledgement (the request is in its OOM intake) until deadline; an error when no
// daemon is there, it refused, or it did not acknowledge in time (a hung daemon).
// A capture without a dump asks for a snapshot: then the daemon's word that the JVM may go (its
// core taken, or no snapshot possible) is waited for up to hold, with the JVM held meanwhile.
// error_code::io when the request may not have been taken and is to be spooled: no daemon, one
// too busy to take it now (too many clients), or no acknowledgement in time; any other error is a
// refusal that spooling would not change.
result<void> hand_over(const std::string& socket_path, const oom_capture& capture, std::chrono::milliseconds deadline,
                       std::chrono::milliseconds hold = std::chrono::seconds(120));

// The socket heapd dump uses: $HEAPD_SOCKET, else /run/heapd/heapd.sock.
std::string hook_socket_path();

}  // namespace heapd::daemon
