#pragma once
// Whether a dump rule's selector (config.h: jvm_selector) picks a JVM, from what discovery and the
// JVM's hsperfdata say about it; nothing here attaches to the JVM.
#include <sys/types.h>

#include <string>
#include <string_view>

#include "attach/jvm_discovery.h"
#include "daemon/config/config.h"
#include "formats/hsperf/hsperfdata_summary.h"

namespace heapd::daemon {

// The name of the user with that uid in the daemon's user database (getpwuid_r), "" when none.
// It may block on a slow name service: call it off the io_context thread.
std::string user_name_of(uid_t uid);

// True when every condition the selector gives holds for the JVM (a selector giving none picks
// every JVM):
// - main_class: an fnmatch(3) glob without flags (so `*` also matches `/` and `.`) matched against
//   the whole main class or jar as `jps -l` prints it (summary.main_class);
// - command: command_re (command compiled as an ECMAScript regex when command_re is empty; a pattern
//   that does not compile matches nothing) searched in the JVM arguments and the command joined as
//   `ps` shows them after the executable: summary.vm_args + " " + summary.command;
// - user: a number is compared with the uid, anything else with the uid's name (user_name, from
//   user_name_of(jvm.uid));
// - container: compared with jvm.in_container;
// - container_name, pod, pod_namespace: globs on the JVM's container (container_of): its name (else
//   its hostname), its pod, its namespace; a JVM on the host or a container without them fails them.
bool selects(const jvm_selector& selector, const attach::discovered_jvm& jvm, const jvm_perf_summary& summary,
             std::string_view user_name);

}  // namespace heapd::daemon
