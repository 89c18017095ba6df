#pragma once
// Talking to a running HotSpot JVM through its attach listener, the way jcmd, jmap and jstack do:
// one call per operation. Each call checks the process without touching it, then works in a short-
// lived helper process that takes the JVM's mount namespace and euid/egid; faults end within the
// timeout with an error_info, never a hang and never a trigger file left behind.
#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "attach/attach_request.h"
#include "base/error.h"

namespace heapd::attach {

// Sends one operation to the JVM with host pid `pid` (which may live in a container) and returns
// its status and output. Errors: no_such_process (gone, or a reused pid), not_a_jvm (never
// signalled), attach_disabled, not_responding (stopped, at a long safepoint, in an OOM hook),
// permission_denied (neither root nor the JVM's uid/gid), protocol, io.
result<attach_reply> attach_command(pid_t pid, const attach_request& request, const attach_options& options = {});

// The same conversation with a listener socket given by path, in this process (no trigger, no
// helper, no change of namespace or ids): for a listener the caller can reach as it is.
result<attach_reply> attach_socket(const std::string& socket_path, const attach_request& request,
                                   const attach_options& options = {});

// `threaddump`: every thread's stack as jstack prints it; locks adds the owned java.util.concurrent
// locks ("l"), extended the extra thread details ("e").
result<attach_reply> thread_dump(pid_t pid, const attach_options& options = {}, bool locks = false,
                                 bool extended = false);
// `inspectheap`: the class histogram, of live objects (after a full GC) or of all objects.
result<attach_reply> inspect_heap(pid_t pid, bool live_only = true, const attach_options& options = {});
// `jcmd`: any diagnostic command line, e.g. "GC.class_histogram -all" or "VM.flags".
result<attach_reply> diagnostic_command(pid_t pid, std::string_view command_line, const attach_options& options = {});
// `properties`: the JVM's system properties, in java.util.Properties text form.
result<attach_reply> system_properties(pid_t pid, const attach_options& options = {});
// `agentProperties`: the properties the JVM keeps for agents (sun.java.command, sun.jvm.args, ...).
result<attach_reply> agent_properties(pid_t pid, const attach_options& options = {});
// `printflag NAME`: the flag as -XX:[+-]NAME or -XX:NAME=VALUE.
result<attach_reply> print_flag(pid_t pid, std::string_view name, const attach_options& options = {});
// `setflag NAME VALUE`: sets a manageable flag (others fail with a non-zero status).
result<attach_reply> set_flag(pid_t pid, std::string_view name, std::string_view value,
                              const attach_options& options = {});

// What `load` gave: the JVM's reply and, when it reports one, the agent's Agent_OnAttach result.
struct load_reply {
    attach_reply reply;
    std::optional<int> agent_code;  // from "return code: N" in the output
    bool loaded() const { return reply.status == 0 && agent_code == 0; }
};
// `load`: loads a JVMTI agent, by absolute path or by library name ("instrument" with "JAR=OPTIONS"
// for a Java agent), passing options to its Agent_OnAttach.
result<load_reply> load_agent(pid_t pid, std::string_view library, bool absolute_path, std::string_view options,
                              const attach_options& options_ = {});
// The agent's result in a `load` reply ("return code: N"), nullopt when there is none.
std::optional<int> agent_return_code(std::string_view output);

}  // namespace heapd::attach
