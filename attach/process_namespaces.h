#pragma once
// Pids and paths across namespaces: a process in a container (the OnOutOfMemoryError hook of a JVM
// in it, or heapctl run there) names JVMs by the pids of its own pid namespace and files by the paths
// of its own mount namespace; heapd acts on host pids and reaches such files through /proc/PID/root.
#include <sys/types.h>

#include <cstdint>
#include <functional>

#include "base/error.h"

namespace heapd::attach {

// The pid namespace a process lives in: the inode of /proc/PID/ns/pid, and how deep it lies
// below the caller's (0: the caller's own namespace; unknown when only the inode is known).
struct pid_namespace {
    std::uint64_t inode = 0;
    int level = -1;  // -1: unknown (a namespace named by inode only, e.g. in a spooled request)
};

// The pid namespace of pid as the caller sees it (its inode and level, from NSpid).
result<pid_namespace> pid_namespace_of(pid_t pid);

// The pid namespace of the calling process (level 0).
result<pid_namespace> own_pid_namespace();

// The caller's pid of the process known as pid in namespace ns: pid itself when ns is the caller's;
// otherwise the process of that namespace (or one nested in it, when ns.level is known) whose pid
// there is pid. no_such_process when there is none.
result<pid_t> pid_from_namespace(pid_t pid, const pid_namespace& ns);

// The reverse: the pid that the process the caller knows as pid has in namespace ns (pid itself
// for the caller's namespace); no_such_process when it lives outside ns and the namespaces in it.
result<pid_t> pid_in_namespace(pid_t pid, const pid_namespace& ns);

// The inode of pid's namespace of that kind ("pid", "mnt", ...; pid 0: the calling process's own).
result<std::uint64_t> namespace_inode(pid_t pid, const char* kind);

// Calls visit with each process of /proc until it returns true; that pid, or -1 when it never does.
result<pid_t> scan_processes(const std::function<bool(pid_t)>& visit);

// The inode of the mount namespace of pid (0: the calling process's own).
result<std::uint64_t> mount_namespace_of(pid_t pid);

// A process living in the mount namespace with that inode (the caller's pid), to reach that
// namespace's files through /proc/PID/root; no_such_process when none is left.
result<pid_t> process_in_mount_namespace(std::uint64_t inode);

}  // namespace heapd::attach
