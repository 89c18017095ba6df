#pragma once
// A JVM's heap taken from outside, for a JVM that cannot answer an attach and may be gone soon: one
// held in its OutOfMemoryError hook that was not armed to dump itself. gdb writes a core file of
// the process (the JVM is stopped at the error's safepoint, so its heap is consistent), and once
// the JVM may go, the JVM's own JDK's serviceability agent turns the core into HPROF
// (jhsdb jmap --binaryheap --core). Both run in a forked child with the JVM's uid and gid (no
// supplementary groups, a clean environment): neither ever has more rights than the JVM's owner, and
// the JDK's jhsdb, which that owner may control, runs only as them. They write into descriptors the
// caller made (the child names them /proc/self/fd/3 and 4), so no path of anyone else's is opened.
// A JVM in a container is read by the JDK in the container: the child enters the JVM's mount
// namespace before it drops to the JVM's ids (and its pid namespace to read the live JVM); gdb,
// which a container seldom has, is the host's and needs no namespace.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "base/error.h"
#include "base/unique_fd.h"

namespace heapd::attach {

// The JVM to read from outside, as the caller sees it.
struct snapshot_target {
    pid_t pid = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    std::string exe;  // the JVM's executable as the JVM sees it (/proc/PID/exe); its JDK's bin/jhsdb reads it
    // The JVM's own namespaces, when it sees another filesystem than ours (a container): jhsdb then
    // runs in them.
    bool in_container = false;
    pid_t ns_pid = 0;              // the JVM's pid in its own pid namespace (in_container)
    std::uint64_t start_time = 0;  // the JVM's start time, checked once its pidfd is held (0: not checked)
    int mount_namespace = -1;      // from hold_mount_namespace, for core_to_hprof (in_container)
};

// The JVM's mount namespace, held open (a descriptor) so that its JDK can run there once the JVM and
// its container's last process are gone. Errors: no_such_process, permission_denied, io.
result<unique_fd> hold_mount_namespace(const snapshot_target& target);

// Writes a core file of the process into core_fd (gdb -p PID, generate-core-file), within timeout.
// Errors: io (gdb missing, it failed: its last words are in the message), not_responding (timeout).
result<void> write_core(const snapshot_target& target, int core_fd, std::chrono::seconds timeout);

// Converts the core in core_fd into an HPROF heap dump in hprof_fd with the JDK of target.exe (in the
// held mount namespace, for a JVM in a container). Once cancelled() says so (checked every 200 ms)
// the converter is killed, with its process group: error cancelled.
result<void> core_to_hprof(const snapshot_target& target, int core_fd, int hprof_fd, std::chrono::seconds timeout,
                           const std::function<bool()>& cancelled = {});

// Whether pgid is the process group of a helper (gdb, jhsdb and what they start) this process runs
// now: jhsdb is a JVM, which discovery must not take for one of the host's.
bool is_helper_group(pid_t pgid);

// Writes the Java threads' stacks of the live process into out_fd, read by the JDK of target.exe
// (jhsdb jstack --pid: the serviceability agent stops the JVM while it reads, no attach needed).
// It runs as the target's owner when the caller is root, else as the caller.
result<void> java_stacks_from_outside(const snapshot_target& target, int out_fd, std::chrono::seconds timeout);

}  // namespace heapd::attach
