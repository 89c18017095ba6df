#pragma once
// How much memory the host has available, also where heapd.service hides /proc/meminfo.
#include <cstdint>

namespace heapd::daemon {

// The host's available memory in bytes: MemAvailable of /proc/meminfo; where that file cannot be
// read (heapd.service mounts /proc with ProcSubset=pid, which hides it), sysinfo(2)'s free and
// buffer memory, a lower bound (the page cache the kernel could reclaim is not counted); 0 when
// neither answers.
std::uint64_t host_memory_available();

}  // namespace heapd::daemon
