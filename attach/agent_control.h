#pragma once
// Commands to heapd's allocation-sampling agent (agent/) in a running JVM. Each is one attach `load`
// of the agent library with the command in its options: the JVM loads the library the first time
// and afterwards hands each load to the agent already there. The agent writes its answer to a new
// file in the JVM's /tmp, which is collected the way a staged heap dump is (heap_dump.h: opened with
// the JVM's rights, never through a link, its name removed, then checked) and read whole.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "attach/attach_request.h"
#include "base/error.h"

namespace heapd::attach {

// How to reach the agent.
struct agent_target {
    std::string library;  // absolute path of libheapd_agent.so, as the JVM sees it
    std::uint64_t max_answer_bytes = 64u << 20;
};

// The agent library to load: `chosen` when given, else libheapd_agent.so beside the running
// executable (the build tree), else where it is installed (HEAPD_AGENT_INSTALL_PATH). Whatever the
// JVM loads runs as the JVM's user, so the file (links resolved: the real path is returned) must
// be a regular file owned by root or by us and writable by nobody else, and so must every directory
// above it. Errors: not_found, permission_denied.
result<std::string> find_agent_library(const std::string& chosen = {});

// The agent library the JVM has loaded, as the JVM names it (heapd's installed library, or a copy
// placed in its /tmp), found in /proc/PID/maps; nullopt when it has none. Loading that path again
// reaches the agent already there and runs no new code.
std::optional<std::string> loaded_agent_library(pid_t pid);

// Sends `command` ("start,interval=524288,depth=16", "show,gc=1", "stop", "status"; the answer
// file and protocol version are added) and returns the agent's answer (JSON, unchecked: see
// formats/sites). A JVM in a container loads a copy of the library that the attach child places
// in the JVM's /tmp as the JVM's user (heapd-agent-PID-RANDOM.so, created new), the first time;
// later commands load the copy the JVM has mapped. Errors: those of attach_command; agent_refused
// when the JVM would not load the library (its reply says why) or the agent wrote no answer in
// time; io when the library cannot be placed or the answer cannot be taken.
result<std::string> agent_command(pid_t pid, const agent_target& agent, std::string_view command, int protocol,
                                  const attach_options& options = {});

// How the names, in the JVM's /tmp, of the table a sampling agent writes when the JVM first runs out
// of Java heap begin (agent/agent_options.h's oom_answer_path): heapd-agent-oom-NSPID-START-; 16
// random hex digits and ".json" follow, which nobody can know in advance.
std::string oom_answer_prefix(pid_t ns_pid, std::uint64_t start_time);

// Takes that table for the OOM dump of the JVM `pid` (ns_pid and start_time as the JVM knows
// them; uid and gid its owner's, as verified while it ran): from the JVM's /tmp while it runs, else
// from ours when it ran on the host (host_tmp), waiting while it runs and has written nothing yet,
// up to `wait`. Each name that fits is opened without following a link, and a file is taken only
// when it is a regular file of the JVM's owner with no other name, at most max_bytes; its name is
// removed (as the owner) once read. Nothing when there is none.
std::optional<std::string> take_oom_answer(pid_t pid, pid_t ns_pid, std::uint64_t start_time, uid_t uid, gid_t gid,
                                           bool host_tmp, std::chrono::milliseconds wait,
                                           std::uint64_t max_bytes = 64u << 20);

}  // namespace heapd::attach
