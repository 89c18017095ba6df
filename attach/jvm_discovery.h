#pragma once
// Finding HotSpot JVMs without attaching to them: through the hsperfdata files they keep mapped,
// /tmp/hsperfdata_<user>/<pid>, on the host and in every container (another /tmp, another pid
// namespace). JVMs started with -XX:-UsePerfData (or -XX:+PerfDisableSharedMem) have no such file:
// they are found as processes that map libjvm.so and handle SIGQUIT, with no perfdata_path.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"

namespace heapd::attach {

// A live JVM found through its hsperfdata file, and where that file is.
struct discovered_jvm {
    pid_t pid = -1;                      // as heapd sees it (heapd's pid namespace)
    pid_t ns_pid = -1;                   // in the JVM's own pid namespace; the file is named after it
    uid_t uid = static_cast<uid_t>(-1);  // the process's effective uid, as heapd sees it
    std::string user;                    // the user name in the directory name hsperfdata_<user>, as the JVM knew it
    bool in_container = false;           // in another mount or pid namespace than the host (init's)
    std::uint64_t mount_ns = 0;          // the JVM's mount namespace (inode of /proc/PID/ns/mnt; 0 if unknown)
    std::uint64_t pid_ns = 0;            // the JVM's pid namespace (inode of /proc/PID/ns/pid; 0 if unknown)
    std::string perfdata_path;  // the hsperfdata file as heapd opens it (/proc/PID/root/tmp/... in a container);
                                // "" for a JVM without one (user "" then too)
    dev_t perfdata_dev = 0;     // identity of that file when it was found, to check when opening it
    ino_t perfdata_ino = 0;
};

// The JVMs found, and how many hsperfdata files could not be checked.
struct discovery {
    std::vector<discovered_jvm> jvms;  // by pid
    std::size_t unreadable = 0;        // hsperfdata files of processes heapd may not inspect
};

// Every live JVM with an hsperfdata file: the files under each distinct /tmp of the host's
// processes (heapd's own and those behind /proc/PID/root), matched to processes by the innermost
// pid of NSpid in /proc/PID/status, and kept only when that process maps that very file (so stale
// files of dead JVMs and pids reused by other processes are left out). Fails only when /proc cannot
// be read. The JVMs of this process's own helpers (jhsdb: is_helper_group) are left out.
result<discovery> discover_jvms();

// The JVM with that pid (as heapd sees it), with or without an hsperfdata file: no_such_process,
// not_a_jvm (no hsperfdata file mapped, no libjvm.so with a SIGQUIT handler) or permission_denied.
result<discovered_jvm> find_jvm(pid_t pid);

// Opens the JVM's hsperfdata file read-only without following a symbolic link or blocking, and
// checks that it is the file discovery found; returns the descriptor (the caller closes it).
result<int> open_perfdata(const discovered_jvm& jvm);

}  // namespace heapd::attach
