#pragma once
// What the daemon knows of a running JVM without attaching to it: where discovery found it and what
// its hsperfdata says (version, command line, heap used, out-of-memory settings).
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "attach/jvm_discovery.h"
#include "base/error.h"
#include "formats/hsperf/hsperfdata_summary.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {

// A JVM found by discovery and, when its hsperfdata could be read, its summary.
struct jvm_facts {
    attach::discovered_jvm jvm;
    std::optional<jvm_perf_summary> summary;
    std::string problem;  // why there is no summary
    bool gone = false;    // the JVM or its hsperfdata file had gone when heapd opened it
};

// The JVM's out-of-memory settings: from its hsperfdata, else (no hsperfdata file) from its command
// line and JAVA_TOOL_OPTIONS, as far as they can be read.
oom_settings oom_settings_of(const jvm_facts& f);

// The process's command line (argv), empty when it cannot be read.
std::vector<std::string> command_line_of(pid_t pid);

// The socket a `heapd dump` in the JVM's OutOfMemoryError hook talks to when the hook names none:
// the JVM's $HEAPD_SOCKET (the hook inherits its environment), else /run/heapd/heapd.sock.
std::string bare_hook_socket(pid_t pid);

// The main class or jar in a java command line (argv[0] first), as `jps -l` shows it (its first
// max_summary_text bytes); "" when none.
std::string main_class_of(const std::vector<std::string>& argv);

// What a JVM's command line tells of what hsperfdata would: main_class, command (the main class or
// jar and its arguments) and vm_args (the options before it), as far as /proc/PID/cmdline says.
jvm_perf_summary summary_from_command_line(pid_t pid);

// Reads the hsperfdata summary of a discovered JVM.
jvm_facts read_jvm_facts(const attach::discovered_jvm& jvm);
// The JVM with host pid `pid` and its facts (find_jvm's errors otherwise).
result<jvm_facts> find_jvm_facts(pid_t pid);

// The row of the `jvms` reply: pid, uid, user, container, main class, version, heap, OOM settings.
wire::json to_json(const jvm_facts& f);

}  // namespace heapd::daemon
