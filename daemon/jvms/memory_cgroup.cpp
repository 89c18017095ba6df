#include "daemon/jvms/memory_cgroup.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "attach/process_info.h"
#include "base/fd_io.h"

namespace heapd::daemon {
namespace {

constexpr int dir_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
constexpr std::size_t max_cgroup_file = 64u << 10;  // memory.stat is about 1.5 KiB

// A file of the cgroup directory dir, nothing when absent or unreadable.
std::optional<std::string> cgroup_file(int dir, const char* name) {
    const unique_fd fd(::openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
    if (!fd) return std::nullopt;
    return read_to_end(fd.get(), max_cgroup_file);
}

std::optional<std::int64_t> limit_file(int dir, const char* name) {
    const auto text = cgroup_file(dir, name);
    return text ? parse_limit(*text) : std::nullopt;
}

// The host's physical memory.
std::optional<std::int64_t> host_total_memory() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return std::nullopt;
    return std::int64_t{pages} * page;
}

}  // namespace

result<unique_fd> open_cgroup_root(int version) {
    const std::vector<const char*> roots = version == 1
                                               ? std::vector<const char*>{"/sys/fs/cgroup/memory"}
                                               : std::vector<const char*>{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
    const long magic = version == 1 ? CGROUP_SUPER_MAGIC : CGROUP2_SUPER_MAGIC;
    for (const char* root : roots) {
        unique_fd fd(::open(root, dir_flags));
        struct statfs fs {};
        if (fd && ::fstatfs(fd.get(), &fs) == 0 && static_cast<long>(fs.f_type) == magic) return fd;
    }
    return fail(error_code::not_found,
                std::string("no cgroup v") + std::to_string(version) + " memory hierarchy is mounted on this host");
}

result<memory_limit> cgroup_limit(int root_fd, const memory_cgroup& cgroup) {
    const bool v1 = cgroup.version == 1;
    const char* limit_name = v1 ? "memory.limit_in_bytes" : "memory.max";
    memory_limit out;
    out.source = "cgroup v" + std::to_string(cgroup.version) + " " + cgroup.path;
    std::string tightest;  // the path of the level whose limit holds
    std::string path;
    unique_fd dir(::openat(root_fd, ".", dir_flags));
    if (!dir) return fail_errno("open", "the cgroup hierarchy's root");
    for (std::size_t at = 1;;) {
        if (const auto l = limit_file(dir.get(), limit_name); l && (!out.bytes || *l < *out.bytes)) {
            out.bytes = l;
            tightest = path.empty() ? "/" : path;
        }
        if (at >= cgroup.path.size()) break;
        const std::size_t end = std::min(cgroup.path.find('/', at), cgroup.path.size());
        const std::string part = cgroup.path.substr(at, end - at);
        at = end + 1;
        if (part.empty()) continue;
        path += "/" + part;
        unique_fd next(::openat(dir.get(), part.c_str(), dir_flags));
        if (!next) {
            if (errno == ENOENT) return fail(error_code::not_found, "cgroup " + cgroup.path + " is gone");
            return fail_errno("open cgroup", path);
        }
        dir = std::move(next);
    }
    out.by_cgroup = out.bytes.has_value();
    if (out.bytes && tightest != (cgroup.path.empty() ? "/" : cgroup.path))
        out.source += " (the limit of its ancestor " + tightest + ")";
    out.cgroup_version = cgroup.version;
    if (const auto text = cgroup_file(dir.get(), v1 ? "memory.usage_in_bytes" : "memory.current"))
        out.cgroup_usage = parse_limit(*text);
    if (const auto text = cgroup_file(dir.get(), "memory.stat"))
        out.cgroup_anonymous = key_value(*text, v1 ? "total_rss" : "anon");
    if (const auto text = cgroup_file(dir.get(), v1 ? "memory.oom_control" : "memory.events"))
        out.oom_kills = key_value(*text, "oom_kill");
    out.swap_limit = limit_file(dir.get(), v1 ? "memory.memsw.limit_in_bytes" : "memory.swap.max");
    if (const auto text = v1 ? std::nullopt : cgroup_file(dir.get(), "memory.pressure"))
        if ((out.pressure = parse_pressure(*text))) out.pressure_source = "cgroup v2 " + cgroup.path;
    return out;
}

std::optional<memory_cgroup> memory_cgroup_of_process(pid_t pid) {
    const auto text = read_small_file(attach::proc_path(pid, "cgroup"), max_cgroup_file);
    return text ? memory_cgroup_of(*text) : std::nullopt;
}

std::optional<std::int64_t> host_oom_kills() {
    const auto text = read_small_file("/proc/vmstat", max_cgroup_file);
    return text ? key_value(*text, "oom_kill") : std::nullopt;
}

namespace {

// The limit of its memory cgroup, else the host's memory.
memory_limit limit_of_cgroup_or_host(pid_t pid, std::string& note) {
    if (const auto cgroup = memory_cgroup_of_process(pid)) {
        auto root = open_cgroup_root(cgroup->version);
        auto limit = root ? cgroup_limit(root->get(), *cgroup) : std::unexpected(root.error());
        if (limit && limit->bytes) return *limit;
        if (!limit)
            note = "memory cgroup: " + limit.error().describe();
        else {
            limit->bytes = host_total_memory();
            limit->source += ", no limit: the host's memory";
            return *limit;
        }
    }
    memory_limit host;
    host.bytes = host_total_memory();
    host.source = "the host's memory";
    return host;
}

// The limit with the host's memory pressure where its cgroup has none of its own (v1, or no PSI).
memory_limit with_host_pressure(memory_limit limit) {
    if (!limit.pressure)
        if (const auto text = read_small_file("/proc/pressure/memory", max_cgroup_file))
            if ((limit.pressure = parse_pressure(*text))) limit.pressure_source = "the host's, /proc/pressure/memory";
    return limit;
}

}  // namespace

memory_limit limit_of_process(pid_t pid, std::string& note) {
    std::string why;
    memory_limit limit = limit_of_cgroup_or_host(pid, why);
    note = why;
    return with_host_pressure(std::move(limit));
}

}  // namespace heapd::daemon
