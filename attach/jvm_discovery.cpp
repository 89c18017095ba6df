#include "attach/jvm_discovery.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <mutex>

#include "attach/process_info.h"
#include "attach/process_namespaces.h"
#include "attach/process_snapshot.h"

namespace heapd::attach {
namespace {

constexpr std::string_view perf_prefix = "hsperfdata_";

// What discovery needs to know of one process.
struct proc_info {
    pid_t pid = -1;
    pid_t inner_pid = -1;  // the last NSpid: its pid in its own namespace
    pid_t group = 0;       // its process group (the first of NSpgid: as we see it)
    uid_t euid = static_cast<uid_t>(-1);
};

std::optional<pid_t> parse_pid(std::string_view s) {
    if (s.empty() || s.size() > 9) return std::nullopt;
    pid_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + (c - '0');
    }
    return v > 0 ? std::optional<pid_t>(v) : std::nullopt;
}

// Uid and NSpid of /proc/PID/status; nothing if the process is gone.
std::optional<proc_info> read_status(pid_t pid) {
    std::ifstream in(proc_path(pid, "status"));
    if (!in) return std::nullopt;
    proc_info p;
    p.pid = pid;
    p.inner_pid = pid;  // kernels without NSpid have one pid namespace
    bool seen_uid = false;
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("Uid:")) {
            std::istringstream f(line.substr(4));
            unsigned long real = 0, effective = 0;
            if (f >> real >> effective) {
                p.euid = static_cast<uid_t>(effective);
                seen_uid = true;
            }
        } else if (line.starts_with("NSpgid:")) {
            p.group = static_cast<pid_t>(std::strtol(line.c_str() + 7, nullptr, 10));
        } else if (line.starts_with("NSpid:")) {
            std::istringstream f(line.substr(6));
            for (long v; f >> v;) p.inner_pid = static_cast<pid_t>(v);
        }
    }
    return seen_uid ? std::optional<proc_info>(p) : std::nullopt;
}

std::uint64_t ns_inode(pid_t pid, const char* kind) { return namespace_inode(pid, kind).value_or(0); }

// Whether /proc/PID/maps has a mapping of the file (dev, ino), or of a file whose path ends in
// "/hsperfdata_<user>/<nspid>" (overlay file systems may show another device or inode). Nothing
// when the maps cannot be read (another user's process, unless heapd is root).
std::optional<bool> maps_file(pid_t pid, dev_t dev, ino_t ino, const std::string& suffix) {
    std::ifstream in(proc_path(pid, "maps"));
    if (!in) return std::nullopt;
    for (std::string line; std::getline(in, line);) {
        // address perms offset major:minor inode path
        std::istringstream f(line);
        std::string addr, perms, offset, devs, path;
        unsigned long long inode = 0;
        if (!(f >> addr >> perms >> offset >> devs >> inode) || inode == 0) continue;
        std::getline(f >> std::ws, path);
        unsigned maj = 0, min = 0;
        if (std::sscanf(devs.c_str(), "%x:%x", &maj, &min) == 2 && maj == ::major(dev) && min == ::minor(dev) &&
            inode == static_cast<unsigned long long>(ino))
            return true;
        if (path.ends_with(suffix)) return true;
    }
    return false;
}

// An hsperfdata file found under a /tmp: its user directory, name and identity.
struct perf_file {
    std::string user;
    pid_t ns_pid = -1;
    struct stat st {};
};

// The files hsperfdata_<user>/<digits> under tmp; directories and files that are symbolic links are skipped.
std::vector<perf_file> list_perf_files(const std::string& tmp, std::optional<pid_t> only = std::nullopt) {
    std::vector<perf_file> out;
    DIR* top = ::opendir(tmp.c_str());
    if (top == nullptr) return out;
    while (dirent* d = ::readdir(top)) {
        std::string_view name = d->d_name;
        if (!name.starts_with(perf_prefix) || name.size() == perf_prefix.size()) continue;
        int dfd = ::openat(::dirfd(top), d->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0) continue;
        std::string user(name.substr(perf_prefix.size()));
        auto check = [&](const char* file) {
            auto ns_pid = parse_pid(file);
            if (!ns_pid || (only && *ns_pid != *only)) return;
            perf_file f{user, *ns_pid, {}};
            if (::fstatat(dfd, file, &f.st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(f.st.st_mode)) return;
            out.push_back(std::move(f));
        };
        if (only) {
            check(std::to_string(*only).c_str());
        } else if (DIR* sub = ::fdopendir(::dup(dfd))) {
            while (dirent* e = ::readdir(sub)) check(e->d_name);
            ::closedir(sub);
        }
        ::close(dfd);
    }
    ::closedir(top);
    return out;
}

// Identity of a directory (its device and inode).
using dir_key = std::pair<dev_t, ino_t>;

std::optional<dir_key> tmp_of(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return std::nullopt;
    return dir_key{st.st_dev, st.st_ino};
}

// The host's mount namespace: that of the first process (init) when it may be read, else ours. A
// service's private mounts (systemd's PrivateMounts=, ProtectSystem=) make no container of the host.
std::uint64_t host_mount_ns() {
    const std::uint64_t init = ns_inode(1, "mnt");
    return init != 0 ? init : ns_inode(0, "mnt");
}

// The heapd side of every comparison: its /tmp and the host's namespaces.
struct self_view {
    std::optional<dir_key> tmp = tmp_of("/tmp");
    std::uint64_t mount_ns = host_mount_ns();
    std::uint64_t pid_ns = ns_inode(0, "pid");
};

// Whether a process is the JVM of an hsperfdata file: it has the file's pid and maps the file.
enum class match { yes, no, unknown };  // unknown: its maps may not be read

match check(const proc_info& p, const perf_file& f) {
    if (p.inner_pid != f.ns_pid) return match::no;
    auto mapped = maps_file(p.pid, f.st.st_dev, f.st.st_ino,
                            "/" + std::string(perf_prefix) + f.user + "/" + std::to_string(f.ns_pid));
    if (!mapped) return match::unknown;
    return *mapped ? match::yes : match::no;
}

// A JVM as its process shows it, without hsperfdata (-XX:+PerfDisableSharedMem, -XX:-UsePerfData).
discovered_jvm make_jvm_without_perfdata(const proc_info& p, const self_view& self) {
    discovered_jvm j;
    j.pid = p.pid;
    j.ns_pid = p.inner_pid;
    j.uid = p.euid;
    j.mount_ns = ns_inode(p.pid, "mnt");
    j.pid_ns = ns_inode(p.pid, "pid");
    j.in_container = (j.mount_ns != 0 && j.mount_ns != self.mount_ns) || (j.pid_ns != 0 && j.pid_ns != self.pid_ns);
    return j;
}

discovered_jvm make_jvm(const proc_info& p, const perf_file& f, bool own_tmp, const self_view& self) {
    discovered_jvm j = make_jvm_without_perfdata(p, self);
    j.ns_pid = f.ns_pid;
    j.user = f.user;
    const std::string tmp = own_tmp ? std::string("/tmp") : proc_path(p.pid, "root/tmp");
    j.perfdata_path = tmp + "/" + std::string(perf_prefix) + f.user + "/" + std::to_string(f.ns_pid);
    j.perfdata_dev = f.st.st_dev;
    j.perfdata_ino = f.st.st_ino;
    return j;
}

// Whether a process that maps no hsperfdata file is a running HotSpot JVM all the same
// (-XX:+PerfDisableSharedMem, -XX:-UsePerfData): libjvm.so mapped and a SIGQUIT handler installed
// (the JVM has finished starting its signal handling). Reading every process's maps at every poll
// would cost, so the answer is kept per pid, start time and executable (an exec changes the
// executable, never the pid or the start time); pids not alive are forgotten at each scan.
class libjvm_cache {
public:
    bool is_jvm(pid_t pid) {
        auto info = read_process_info(pid);
        if (!info) return false;
        char exe[4096];
        ssize_t n = ::readlink(proc_path(pid, "exe").c_str(), exe, sizeof exe - 1);
        const std::string image = n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : std::string();
        std::lock_guard lock(mutex_);
        auto it = known_.find(pid);
        if (it != known_.end() && it->second.start_time == info->start_time && it->second.image == image &&
            (it->second.jvm || !it->second.maybe_later))
            return it->second.jvm && info->handles_sigquit();
        const std::optional<bool> mapped = maps_libjvm(pid);
        entry e{info->start_time, image, mapped.value_or(false), false};
        // A JVM still starting has libjvm.so but no handler yet: asked again next time.
        e.maybe_later = e.jvm && !info->handles_sigquit();
        known_[pid] = e;
        return e.jvm && info->handles_sigquit();
    }
    void retain(const std::set<pid_t>& alive) {
        std::lock_guard lock(mutex_);
        std::erase_if(known_, [&](const auto& e) { return !alive.contains(e.first); });
    }

private:
    struct entry {
        std::uint64_t start_time = 0;
        std::string image;
        bool jvm = false;
        bool maybe_later = false;
    };
    std::mutex mutex_;
    std::map<pid_t, entry> known_;
};

libjvm_cache& no_perfdata_jvms() {
    static libjvm_cache cache;
    return cache;
}

}  // namespace

result<discovery> discover_jvms() {
    const self_view self;
    // The processes, grouped by the /tmp they see.
    std::map<dir_key, std::vector<proc_info>> by_tmp;
    std::set<pid_t> uninspectable;  // other users' processes, when heapd is not root
    auto scanned = scan_processes([&](pid_t pid) {
        auto info = read_status(pid);
        if (!info) return false;
        if (info->group > 0 && is_helper_group(info->group)) return false;  // our own jhsdb: no JVM of the host's
        auto key = tmp_of(proc_path(pid, "root/tmp"));
        if (key)
            by_tmp[*key].push_back(*info);
        else if (errno == EACCES || errno == EPERM)
            uninspectable.insert(pid);
        return false;
    });
    if (!scanned) return std::unexpected(scanned.error());
    if (self.tmp) by_tmp.try_emplace(*self.tmp);

    discovery out;
    std::set<pid_t> seen;
    for (const auto& [key, procs] : by_tmp) {
        const bool own_tmp = self.tmp && key == *self.tmp;
        if (!own_tmp && procs.empty()) continue;
        const std::string tmp = own_tmp ? std::string("/tmp") : proc_path(procs.front().pid, "root/tmp");
        for (const perf_file& f : list_perf_files(tmp)) {
            bool found = false, unknown = false;
            for (const proc_info& p : procs) {
                match m = check(p, f);
                if (m == match::unknown) unknown = true;
                if (m != match::yes || !seen.insert(p.pid).second) continue;
                out.jvms.push_back(make_jvm(p, f, own_tmp, self));
                found = true;
                break;
            }
            // A file whose process heapd may not inspect (another user's JVM, heapd not root).
            if (!found && (unknown || (own_tmp && uninspectable.contains(f.ns_pid)))) ++out.unreadable;
        }
    }
    // JVMs without an hsperfdata file.
    std::set<pid_t> alive;
    for (const auto& [key, procs] : by_tmp)
        for (const proc_info& p : procs) {
            alive.insert(p.pid);
            if (!seen.contains(p.pid) && no_perfdata_jvms().is_jvm(p.pid)) {
                out.jvms.push_back(make_jvm_without_perfdata(p, self));
                seen.insert(p.pid);
            }
        }
    no_perfdata_jvms().retain(alive);
    std::sort(out.jvms.begin(), out.jvms.end(), [](const auto& a, const auto& b) { return a.pid < b.pid; });
    return out;
}

result<discovered_jvm> find_jvm(pid_t pid) {
    const self_view self;
    if (pid <= 0) return fail(error_code::no_such_process, "no process " + std::to_string(pid));
    auto info = read_status(pid);
    if (!info) return fail(error_code::no_such_process, "no process " + std::to_string(pid));
    const std::string root_tmp = proc_path(pid, "root/tmp");
    auto key = tmp_of(root_tmp);
    if (!key) {
        if (errno == EACCES || errno == EPERM)
            return fail(error_code::permission_denied,
                        "may not inspect process " + std::to_string(pid) + " (" + root_tmp + ")");
        return fail(error_code::no_such_process, "process " + std::to_string(pid) + " exited");
    }
    const bool own_tmp = self.tmp && *key == *self.tmp;
    bool unknown = false;
    for (const perf_file& f : list_perf_files(own_tmp ? "/tmp" : root_tmp, info->inner_pid)) {
        match m = check(*info, f);
        if (m == match::yes) return make_jvm(*info, f, own_tmp, self);
        if (m == match::unknown) unknown = true;
    }
    if (unknown) return fail(error_code::permission_denied, "may not read /proc/" + std::to_string(pid) + "/maps");
    if (no_perfdata_jvms().is_jvm(pid)) return make_jvm_without_perfdata(*info, self);
    return fail(error_code::not_a_jvm,
                "process " + std::to_string(pid) +
                    " is no running HotSpot JVM (no hsperfdata file, no libjvm.so with a SIGQUIT handler)");
}

result<int> open_perfdata(const discovered_jvm& jvm) {
    if (jvm.perfdata_path.empty())
        return fail(error_code::not_a_jvm, "JVM " + std::to_string(jvm.pid) +
                                               " has no hsperfdata file (-XX:+PerfDisableSharedMem or "
                                               "-XX:-UsePerfData)");
    int fd = ::open(jvm.perfdata_path.c_str(), O_RDONLY | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        auto code = err == ENOENT                     ? error_code::no_such_process
                    : (err == EACCES || err == EPERM) ? error_code::permission_denied
                                                      : error_code::io;
        return fail(code, "cannot open " + jvm.perfdata_path + ": " + std::strerror(err));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != jvm.perfdata_dev ||
        st.st_ino != jvm.perfdata_ino) {
        ::close(fd);
        return fail(error_code::no_such_process,
                    jvm.perfdata_path + " is no longer the file of JVM " + std::to_string(jvm.pid));
    }
    return fd;
}

}  // namespace heapd::attach
