#include "attach/process_namespaces.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "attach/process_info.h"

namespace heapd::attach {
namespace {

// The pids of a process in each pid namespace it belongs to, the caller's first (NSpid).
std::vector<pid_t> ns_pids(pid_t pid) {
    std::ifstream in(proc_path(pid, "status"));
    for (std::string line; std::getline(in, line);) {
        if (!line.starts_with("NSpid:")) continue;
        std::istringstream ids(line.substr(6));
        std::vector<pid_t> out;
        for (long id; ids >> id;) out.push_back(static_cast<pid_t>(id));
        return out;
    }
    return {};
}

// Whether the pid namespace `up` levels above the one of pid is the namespace with that inode.
bool namespace_above_is(pid_t pid, std::size_t up, std::uint64_t inode) {
    int fd = ::open(proc_path(pid, "ns/pid").c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC);
    for (std::size_t i = 0; fd >= 0 && i < up; ++i) {
        int parent = ::ioctl(fd, NS_GET_PARENT);
        ::close(fd);
        fd = parent;
    }
    if (fd < 0) return false;
    struct stat st {};
    const bool same = ::fstat(fd, &st) == 0 && st.st_ino == inode;
    ::close(fd);
    return same;
}

}  // namespace

result<std::uint64_t> namespace_inode(pid_t pid, const char* kind) {
    const std::string path = (pid == 0 ? std::string("/proc/self") : proc_path(pid)) + "/ns/" + kind;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        int e = errno;
        return fail(e == ENOENT || e == ESRCH ? error_code::no_such_process : error_code::io,
                    path + ": " + std::strerror(e));
    }
    return static_cast<std::uint64_t>(st.st_ino);
}

result<pid_t> scan_processes(const std::function<bool(pid_t)>& visit) {
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) return fail(error_code::io, std::string("cannot read /proc: ") + std::strerror(errno));
    pid_t found = -1;
    while (dirent* e = ::readdir(proc)) {
        char* end = nullptr;
        const long candidate = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0' || candidate <= 0) continue;
        if (visit(static_cast<pid_t>(candidate))) {
            found = static_cast<pid_t>(candidate);
            break;
        }
    }
    ::closedir(proc);
    return found;
}

result<pid_namespace> pid_namespace_of(pid_t pid) {
    if (pid <= 0) return fail(error_code::no_such_process, "invalid pid " + std::to_string(pid));
    auto inode = namespace_inode(pid, "pid");
    if (!inode) return std::unexpected(inode.error());
    const auto ids = ns_pids(pid);
    if (ids.empty()) return fail(error_code::no_such_process, "no process " + std::to_string(pid));
    return pid_namespace{*inode, static_cast<int>(ids.size()) - 1};
}

result<pid_namespace> own_pid_namespace() {
    auto inode = namespace_inode(0, "pid");
    if (!inode) return std::unexpected(inode.error());
    return pid_namespace{*inode, 0};
}

result<pid_t> pid_from_namespace(pid_t pid, const pid_namespace& ns) {
    if (pid <= 0) return fail(error_code::no_such_process, "invalid pid " + std::to_string(pid));
    auto own = own_pid_namespace();
    if (!own) return std::unexpected(own.error());
    if (ns.inode == own->inode || ns.level == 0) return pid;
    auto found = scan_processes([&](pid_t p) {
        const auto ids = ns_pids(p);
        if (ids.empty()) return false;
        if (ns.level > 0) {
            // Seen from a namespace `level` deep: its pid there is NSpid[level], when that namespace is ns.
            const auto level = static_cast<std::size_t>(ns.level);
            return ids.size() > level && ids[level] == pid && namespace_above_is(p, ids.size() - 1 - level, ns.inode);
        }
        // Only the inode is known: a process of that very namespace.
        if (ids.back() != pid) return false;
        auto inode = namespace_inode(p, "pid");
        return inode && *inode == ns.inode;
    });
    if (!found) return found;
    if (*found < 0)
        return fail(error_code::no_such_process,
                    "no process " + std::to_string(pid) + " in pid namespace " + std::to_string(ns.inode));
    return found;
}

result<pid_t> pid_in_namespace(pid_t pid, const pid_namespace& ns) {
    auto own = own_pid_namespace();
    if (!own) return std::unexpected(own.error());
    if (ns.inode == own->inode || ns.level == 0) return pid;
    const auto ids = ns_pids(pid);
    if (ids.empty()) return fail(error_code::no_such_process, "no process " + std::to_string(pid));
    const std::size_t level = ns.level > 0 ? static_cast<std::size_t>(ns.level) : ids.size() - 1;
    if (ids.size() <= level || !namespace_above_is(pid, ids.size() - 1 - level, ns.inode))
        return fail(error_code::no_such_process,
                    "process " + std::to_string(pid) + " is not in pid namespace " + std::to_string(ns.inode));
    return ids[level];
}

result<std::uint64_t> mount_namespace_of(pid_t pid) { return namespace_inode(pid, "mnt"); }

result<pid_t> process_in_mount_namespace(std::uint64_t inode) {
    auto found = scan_processes([&](pid_t p) {
        auto ns = mount_namespace_of(p);
        return ns && *ns == inode;
    });
    if (found && *found < 0)
        return fail(error_code::no_such_process, "no process left in mount namespace " + std::to_string(inode));
    return found;
}

}  // namespace heapd::attach
