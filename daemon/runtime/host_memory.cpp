#include "daemon/runtime/host_memory.h"

#include <sys/sysinfo.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace heapd::daemon {

std::uint64_t host_memory_available() {
    if (std::FILE* f = std::fopen("/proc/meminfo", "re")) {
        char line[256];
        std::uint64_t kib = 0;
        bool found = false;
        while (!found && std::fgets(line, sizeof line, f) != nullptr)
            found = std::strncmp(line, "MemAvailable:", 13) == 0 && std::sscanf(line + 13, " %" SCNu64, &kib) == 1;
        std::fclose(f);
        if (found) return kib * 1024;
    }
    struct sysinfo si {};
    if (::sysinfo(&si) != 0) return 0;
    return (static_cast<std::uint64_t>(si.freeram) + si.bufferram) * si.mem_unit;
}

}  // namespace heapd::daemon
