#pragma once
// The memory cgroup a process is held to, read from the cgroup filesystem without following a path
// anyone else controls: the hierarchy's root is opened and checked to be a cgroup filesystem, the
// cgroup's directories are opened one component at a time below it (O_NOFOLLOW), and each file is
// opened relative to its directory. cgroup v1 (memory.limit_in_bytes, memory.usage_in_bytes,
// memory.oom_control, memory.memsw.limit_in_bytes) and v2 (memory.max, memory.current,
// memory.events, memory.swap.max) are read by the same code.
#include <sys/types.h>

#include <optional>
#include <string>

#include "base/error.h"
#include "base/unique_fd.h"
#include "formats/memory/cgroup_files.h"
#include "formats/memory/jvm_memory.h"

namespace heapd::daemon {

// The root of a memory cgroup hierarchy on this host: v1's memory controller
// (/sys/fs/cgroup/memory) or the unified hierarchy (/sys/fs/cgroup, else /sys/fs/cgroup/unified),
// opened and checked to be a cgroup filesystem. Errors: not_found (not mounted), io.
result<unique_fd> open_cgroup_root(int version);

// The limit that holds the cgroup: the tightest memory limit of it and its ancestors below
// root_fd, its usage (and of it the anonymous memory), OOM kills and swap limit; nothing set where the files are absent
// (no limit anywhere: bytes stays empty). Errors: not_found (the cgroup is gone), io.
result<memory_limit> cgroup_limit(int root_fd, const memory_cgroup& cgroup);

// The memory cgroup of process pid (/proc/PID/cgroup), nothing when it has none or is gone.
std::optional<memory_cgroup> memory_cgroup_of_process(pid_t pid);

// The host's count of processes the kernel's OOM killer ended (/proc/vmstat oom_kill, Linux 4.13).
std::optional<std::int64_t> host_oom_kills();

// The limit that applies to process pid: its memory cgroup's (v1 or v2, from /proc/PID/cgroup),
// else the host's memory, with the memory pressure of its cgroup (v2) or else of the host. A note
// says why a cgroup could not be read.
memory_limit limit_of_process(pid_t pid, std::string& note);

}  // namespace heapd::daemon
