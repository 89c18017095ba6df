#include "daemon/jobs/analysis_memory.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "base/big_memory.h"
#include "daemon/jvms/memory_cgroup.h"
#include "daemon/runtime/host_memory.h"
#include "formats/report/quantities.h"

namespace heapd::daemon {
namespace {

// A field of /proc/self/status in bytes ("VmData:"), 0 when unknown.
std::uint64_t status_kib(const char* field) {
    std::FILE* f = std::fopen("/proc/self/status", "re");
    if (f == nullptr) return 0;
    char line[256];
    std::uint64_t kib = 0;
    const std::size_t length = std::strlen(field);
    while (std::fgets(line, sizeof line, f) != nullptr)
        if (std::strncmp(line, field, length) == 0 && std::sscanf(line + length, " %" SCNu64, &kib) == 1) break;
    std::fclose(f);
    return kib * 1024;
}

// What the process's memory cgroup leaves it: the limit (the tightest of its ancestors') less the
// anonymous memory charged to it (its page cache can be reclaimed); nullopt when there is no limit
// or no cgroup could be read (daemon/jvms/memory_cgroup.h, for v1 and v2).
std::optional<std::uint64_t> cgroup_room() {
    std::string note;
    const memory_limit limit = limit_of_process(::getpid(), note);
    if (!limit.by_cgroup || !limit.bytes || !limit.cgroup_anonymous) return std::nullopt;
    const std::int64_t room = *limit.bytes - *limit.cgroup_anonymous;
    return static_cast<std::uint64_t>(std::max<std::int64_t>(room, 0));
}

spill_room measured;  // set once by apply_memory_plan, before any analysis thread runs

}  // namespace

spill_room measured_spill_room() { return measured; }

std::string out_of_room_text(const std::string& limit, const std::string& spill_dir) {
    const big_memory::usage u = big_memory::current_usage();
    const spill_room room = measured_spill_room();
    const std::string disk = " (that disk had " + text::human_bytes(room.free) + " free, less the reserve of " +
                             text::human_bytes(room.reserve) + " left to the host)";
    if (u.foreseen != 0)
        return "the analysis needs at least " + text::human_bytes(u.foreseen) +
               " more for its object graph and dominator tree, and only " + text::human_bytes(u.foreseen_room) +
               " were left of the " + text::human_bytes(u.budget) + " of memory and the " +
               text::human_bytes(room.allowed) + " of disk its spill file may take in " + spill_dir + disk +
               ": refused before they were made";
    if (u.spill_refused == 0) return "the analysis needs more memory than " + limit + " allows";
    std::string text = "the analysis needs more than " + text::human_bytes(u.budget) + " of memory and the " +
                       text::human_bytes(room.allowed) + " of disk its spill file may take in " + spill_dir + disk +
                       ": " + text::human_bytes(u.spilled_then) + " were spilled when " +
                       text::human_bytes(u.spill_refused) + " more " +
                       (u.disk_full ? "found the disk full" : "would have passed it");
    return text;
}

std::uint64_t available_memory() {
    const std::uint64_t host = host_memory_available();
    const auto room = cgroup_room();
    return room ? (host != 0 ? std::min(host, *room) : *room) : host;
}

int spill_file_in(const std::string& dir) {
    return ::open(dir.empty() ? "." : dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}

result<void> apply_memory_plan(const memory_plan& plan) {
    if (plan.limit != 0) {
        // Private writable mappings count (the heap, thread stacks, anonymous big arrays); the
        // dump's read-only mapping and the spill file's shared one do not.
        const std::uint64_t data = status_kib("VmData:") + plan.limit;
        const rlimit bound{data, data};
        if (::setrlimit(RLIMIT_DATA, &bound) != 0)
            return fail(error_code::io, std::string("setrlimit: ") + std::strerror(errno));
    }
    std::uint64_t max_spilled = plan.max_spilled;
    struct statvfs disk {};
    if (plan.spill_file >= 0 && ::fstatvfs(plan.spill_file, &disk) == 0) {
        const std::uint64_t size = static_cast<std::uint64_t>(disk.f_blocks) * disk.f_frsize;
        measured.free = static_cast<std::uint64_t>(disk.f_bavail) * disk.f_frsize;
        measured.reserve = plan.reserve.on(size);
        measured.allowed = measured.free > measured.reserve ? measured.free - measured.reserve : 0;
        max_spilled = std::min(max_spilled, measured.allowed);
    }
    const std::uint64_t available = available_memory();
    const std::uint64_t budget = plan.limit != 0  ? plan.limit / 4 * 3
                                 : available != 0 ? available / 2
                                                  : std::numeric_limits<std::uint64_t>::max();
    big_memory::spill_to(plan.spill_file, budget, max_spilled);
    return {};
}

}  // namespace heapd::daemon
