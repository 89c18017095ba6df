#include "daemon/jobs/analysis_memory.h"

#include <fcntl.h>
#include <sys/resource.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>

#include "base/big_memory.h"
#include "base/fd_io.h"
#include "daemon/runtime/host_memory.h"

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

// The first number after "key " in a file of "key value" lines (memory.stat), or nullopt.
std::optional<std::uint64_t> stat_field(const std::string& file, const char* key) {
    auto text = read_small_file(file, 1u << 20);
    if (!text) return std::nullopt;
    const std::string prefix = "\n" + std::string(key) + " ";
    const std::string lines = "\n" + *text;
    const auto at = lines.find(prefix);
    if (at == std::string::npos) return std::nullopt;
    return std::strtoull(lines.c_str() + at + prefix.size(), nullptr, 10);
}

// A file holding one number ("max" for none), or nullopt.
std::optional<std::uint64_t> number_file(const std::string& file) {
    auto text = read_small_file(file, 4096);
    if (!text || text->empty() || text->starts_with("max")) return std::nullopt;
    return std::strtoull(text->c_str(), nullptr, 10);
}

// What the process's memory cgroup leaves it: the limit (the tightest of its ancestors') less the
// anonymous memory charged to it (its page cache can be reclaimed); nullopt when there is no limit.
// cgroup v2 (memory.max, anon) and v1 (hierarchical_memory_limit, total_rss), where the kernel
// shows them (/proc/self/cgroup names the group; the hierarchies are root's).
std::optional<std::uint64_t> cgroup_room() {
    std::ifstream in("/proc/self/cgroup");
    for (std::string line; std::getline(in, line);) {
        const auto first = line.find(':'), second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos) continue;
        const std::string controllers = "," + line.substr(first + 1, second - first - 1) + ",";
        const std::string group = line.substr(second + 1);
        if (controllers == ",,") {
            for (const char* root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
                const std::string dir = root + group;
                auto anon = stat_field(dir + "/memory.stat", "anon");
                if (!anon) continue;
                std::optional<std::uint64_t> limit;
                for (std::string at = group;; at = at.substr(0, std::max<std::size_t>(at.rfind('/'), 1))) {
                    if (auto l = number_file(root + at + "/memory.max")) limit = std::min(*l, limit.value_or(*l));
                    if (at.size() <= 1) break;
                }
                if (limit) return *limit > *anon ? *limit - *anon : 0;
                return std::nullopt;
            }
        } else if (controllers.find(",memory,") != std::string::npos) {
            const std::string stat = "/sys/fs/cgroup/memory" + group + "/memory.stat";
            auto limit = stat_field(stat, "hierarchical_memory_limit");
            auto rss = stat_field(stat, "total_rss");
            // No limit reads as the largest page-aligned value.
            if (limit && rss && *limit < (std::uint64_t{1} << 60)) return *limit > *rss ? *limit - *rss : 0;
        }
    }
    return std::nullopt;
}

}  // namespace

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
    const std::uint64_t available = available_memory();
    const std::uint64_t budget = plan.limit != 0  ? plan.limit / 4 * 3
                                 : available != 0 ? available / 2
                                                  : std::numeric_limits<std::uint64_t>::max();
    big_memory::spill_to(plan.spill_file, budget, plan.max_spilled);
    return {};
}

}  // namespace heapd::daemon
