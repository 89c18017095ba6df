#pragma once
// Arming a JVM ahead of its OutOfMemoryError. HotSpot runs -XX:OnOutOfMemoryError at a safepoint:
// nothing can attach until the hook returns, and the JVM may exit right after it (its last thread
// died of the error, -XX:+ExitOnOutOfMemoryError) or keep a full heap in which its attach listener
// cannot start. So the daemon sets the manageable flags ahead of time, through attach while the
// JVM is healthy: HeapDumpOnOutOfMemoryError on, and HeapDumpPath at a fresh name in the JVM's own
// /tmp. The JVM then writes its dump itself, before its hook runs, and the hook hands that file over
// (oom_hook.h). A HeapDumpPath the user set is never replaced: their dump is adopted from there.
//
// The name, /tmp/heapd-oom-<nspid>-<start time>-<tag>.hprof, does not exist until the JVM creates it
// (mode 0600, as its own user) and cannot be guessed: the tag, 16 hex digits, is a keyed hash of the
// JVM's pid, start time and user under a secret of the store's (base/keyed_hash.h). So nobody can
// put a file or link there first; the start time keeps a later JVM with the same pid (pid 1 of every
// container) from taking an earlier one's dump; and a dump found at that name after its JVM has
// gone (spooled while the daemon was down) is known to be the one heapd armed that JVM of that user
// for, not a file someone names after a JVM that was never theirs.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "attach/attach_request.h"
#include "base/keyed_hash.h"
#include "formats/hsperf/hsperfdata_summary.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {

// What arming found or did to one JVM.
enum class arm_state {
    armed,      // heapd's HeapDumpPath and HeapDumpOnOutOfMemoryError are set
    own_path,   // HeapDumpOnOutOfMemoryError is on with the user's own HeapDumpPath (set by heapd or the user)
    not_armed,  // it could not be armed (why says it)
};

// The outcome of arming one JVM.
struct arm_status {
    arm_state state = arm_state::not_armed;
    std::string dump_path;  // where the JVM writes its OOM dump, as the JVM sees it ("" when not armed)
    std::string why;        // not_armed: the reason; otherwise what was done ("set", "already set")
    bool changed = false;   // flags were set this time
    // It has no heapd hook: the daemon collects its dump itself when it is written (dump_collector.h).
    bool collected = false;
    // Its hook, read through attach, hands its dump to another daemon: left to that one. (What
    // hsperfdata shows of the hook is cut at the first " -", so a socket it names may be missing.)
    bool another_daemons = false;
};

// {"state": "armed" | "own_path" | "not_armed", "dump_path", "note"}: for `jvms`.
wire::json to_json(const arm_status& s);

// The name prefix of heapd's OOM dumps for one JVM: "heapd-oom-<nspid>-<start time>-".
std::string armed_dump_prefix(pid_t ns_pid, std::uint64_t start_time);
// Whether name (a file name in the JVM's /tmp) is one of heapd's OOM dumps for that JVM, the
// JVM's second and later dumps (name.hprof.1, ...) included.
bool is_armed_dump_name(std::string_view name, pid_t ns_pid, std::uint64_t start_time);

// The tag of heapd's OOM dump name for the JVM (ns_pid, start_time) of user uid under key.
std::string armed_dump_tag(const hash_key& key, pid_t ns_pid, std::uint64_t start_time, uid_t uid);
// Whether name is heapd's OOM dump name for that JVM, tagged for that user under key.
bool armed_dump_vouched(const hash_key& key, std::string_view name, pid_t ns_pid, std::uint64_t start_time, uid_t uid);

// Whether the JVM's -XX:OnOutOfMemoryError runs heapd (the hook arming is for).
bool hook_runs_heapd(const oom_settings& oom);
// The socket the hook's `heapd dump` names (--socket S or --socket=S), when it names one.
std::optional<std::string> hook_socket(const oom_settings& oom);
// Whether the hook runs heapd and hands its dump to the daemon listening at socket_path: one that
// names another daemon's socket is that daemon's to arm, and one that names none goes to
// bare_socket (the JVM's $HEAPD_SOCKET, else the standard socket: bare_hook_socket).
bool hook_reaches(const oom_settings& oom, std::string_view socket_path, std::string_view bare_socket);

// Arms the JVM with host pid `pid` (its pid in its namespace and its start time given) for the
// daemon at socket_path: reads its hook and both flags through attach, then sets what is missing.
// A JVM whose hook does not run heapd is armed too (collected set: the daemon collects its dump).
// heap_max is the most the heap may hold (bytes; 0: asked of the JVM, MaxHeapSize): a /tmp with less
// room than that is not used. tag: the JVM's armed_dump_tag; a dump path of heapd's with another tag
// (another daemon's store, an older heapd) is replaced. options bound each attach.
arm_status arm_jvm(pid_t pid, pid_t ns_pid, std::uint64_t start_time, std::uint64_t heap_max, std::string_view tag,
                   std::string_view socket_path, const attach::attach_options& options);

// Whether the JVM runs its OutOfMemoryError hook now: its VM Thread, which runs the hook's commands
// one after the other inside a VM operation, has a child process. Such a JVM is at a safepoint and
// must not be signalled (SIGQUIT would come out as a thread dump in its output once it resumes).
bool oom_hook_running(pid_t pid);

// A flag's value in printflag's answer ("-XX:HeapDumpPath=/x" gives "/x", "-XX:+Name" "true"),
// nullopt when the answer is not about that flag.
std::optional<std::string> printed_flag_value(std::string_view output, std::string_view name);

}  // namespace heapd::daemon
