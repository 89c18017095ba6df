#pragma once
// A JVM's heap taken from outside, for a JVM that cannot answer an attach and may be gone soon: one
// held in its OutOfMemoryError hook that was not armed to dump itself. gdb writes a core file of
// the process (the JVM is stopped at the error's safepoint, so its heap is consistent), and once
// the JVM may go, the JVM's own JDK's serviceability agent turns the core into HPROF
// (jhsdb jmap --binaryheap --core). Both run in a forked child with the JVM's uid and gid (no
// supplementary groups, a clean environment): neither ever has more rights than the JVM's owner, and
// the JDK's jhsdb, which that owner may control, runs only as them. They write into descriptors the
// caller made (the child names them /proc/self/fd/3 and 4), so no path of anyone else's is opened.
#include <sys/types.h>

#include <chrono>
#include <string>

#include "base/error.h"

namespace heapd::attach {

// The JVM to snapshot, as the caller (in the JVM's mount namespace) sees it.
struct snapshot_target {
    pid_t pid = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    std::string exe;  // the JVM's executable (/proc/PID/exe); its JDK's bin/jhsdb converts the core
};

// Writes a core file of the process into core_fd (gdb -p PID, generate-core-file), within timeout.
// Errors: io (gdb missing, it failed: its last words are in the message), not_responding (timeout).
result<void> write_core(const snapshot_target& target, int core_fd, std::chrono::seconds timeout);

// Converts the core in core_fd into an HPROF heap dump in hprof_fd with the JDK of target.exe.
result<void> core_to_hprof(const snapshot_target& target, int core_fd, int hprof_fd, std::chrono::seconds timeout);

// Writes the Java threads' stacks of the live process into out_fd, read by the JDK of target.exe
// (jhsdb jstack --pid: the serviceability agent stops the JVM while it reads, no attach needed).
// It runs as the target's owner when the caller is root, else as the caller.
result<void> java_stacks_from_outside(const snapshot_target& target, int out_fd, std::chrono::seconds timeout);

}  // namespace heapd::attach
