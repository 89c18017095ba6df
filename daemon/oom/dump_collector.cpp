#include "daemon/oom/dump_collector.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <boost/asio/post.hpp>

#include "attach/process_info.h"

namespace heapd::daemon {
namespace {

// JVMs watched at once: each holds a descriptor of its dump directory.
constexpr std::size_t max_watched = 4096;
constexpr std::uint32_t watch_mask = IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR;

// path opened as a directory (O_PATH) beneath dir, no link followed on the way, ".." kept inside.
unique_fd open_beneath(int dir, const std::string& path, bool in_root) {
    open_how how{};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = (in_root ? RESOLVE_IN_ROOT : RESOLVE_BENEATH) | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    return unique_fd(
        static_cast<int>(::syscall(SYS_openat2, dir, path.empty() ? "." : path.c_str(), &how, sizeof how)));
}

}  // namespace

bool is_dump_name(std::string_view name, std::string_view base) {
    if (!name.starts_with(base)) return false;
    name.remove_prefix(base.size());
    if (name.empty()) return true;
    // HotSpot's second and later dumps to one path: base.1, base.2, ... (JDK 21's segments, base.p0, are not)
    if (name[0] != '.' || name.size() == 1 || name.size() > 11) return false;
    for (char c : name.substr(1))
        if (c < '0' || c > '9') return false;
    return true;
}

result<std::unique_ptr<dump_collector>> dump_collector::open(boost::asio::io_context& io, on_dump on_dump) {
    const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) return fail_errno("cannot watch the JVMs' dump directories", "inotify");
    std::unique_ptr<dump_collector> c(new dump_collector(io, fd, std::move(on_dump)));
    c->read_events();
    return c;
}

dump_collector::dump_collector(boost::asio::io_context& io, int fd, on_dump on_dump)
    : io_(io), inotify_(io, fd), on_dump_(std::move(on_dump)) {}

std::size_t dump_collector::size() const {
    std::lock_guard lock(mutex_);
    return watched_.size();
}

result<void> dump_collector::watch(const collect_target& target) {
    const pid_t pid = target.id.pid;
    // Where the dump goes, as the JVM names it: a directory, or a file in one.
    const bool absolute = target.dump_path.starts_with('/');
    const std::string start_dir = attach::proc_path(pid, absolute ? "root" : "cwd");
    unique_fd start(::open(start_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!start) return fail_errno("cannot open where pid " + std::to_string(pid) + "'s dump path starts", start_dir);
    watched w;
    w.target = target;
    w.dir_fd = open_beneath(start.get(), target.dump_path, absolute);
    if (w.dir_fd) {
        w.dir = target.dump_path;
        w.base = "java_pid" + std::to_string(target.ns_pid) + ".hprof";
    } else {
        const std::size_t slash = target.dump_path.rfind('/');
        w.dir = slash == std::string::npos ? std::string() : target.dump_path.substr(0, slash == 0 ? 1 : slash);
        w.base = target.dump_path.substr(slash == std::string::npos ? 0 : slash + 1);
        w.dir_fd = open_beneath(start.get(), w.dir, absolute);
        if (!w.dir_fd || w.base.empty())
            return fail_errno("cannot open the directory of its HeapDumpPath (no link is followed there)",
                              target.dump_path.empty() ? "its working directory" : target.dump_path);
    }
    // Opened through /proc/PID: still that JVM?
    auto info = attach::read_process_info(pid);
    if (!info || info->start_time != target.id.start_time)
        return fail(error_code::no_such_process, "pid " + std::to_string(pid) + " has ended");
    struct stat st {};
    if (::fstatat(w.dir_fd.get(), w.base.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) w.stale_ino = st.st_ino;

    std::lock_guard lock(mutex_);
    int old_wd = -1;
    if (auto it = watched_.find(target.id); it != watched_.end()) {
        if (it->second.dir == w.dir && it->second.base == w.base) return {};  // watched already
        // Elsewhere now (a HeapDumpPath changed): the dump already held, if any, stays.
        if (it->second.file || it->second.delivered) return {};
        old_wd = it->second.wd;
    } else if (watched_.size() >= max_watched) {
        return fail(error_code::busy,
                    "the daemon watches " + std::to_string(max_watched) + " JVMs' dump directories already");
    }
    const std::string self = "/proc/self/fd/" + std::to_string(w.dir_fd.get());
    w.wd = ::inotify_add_watch(inotify_.native_handle(), self.c_str(), watch_mask);
    if (w.wd < 0)
        return fail_errno("cannot watch the directory of its dump", w.dir.empty() ? "its working directory" : w.dir);
    watched_[target.id] = std::move(w);
    if (old_wd >= 0) release_watch(old_wd);
    return {};
}

void dump_collector::release_watch(int wd) {
    for (const auto& [id, w] : watched_)
        if (w.wd == wd) return;  // another JVM's directory too
    ::inotify_rm_watch(inotify_.native_handle(), wd);
}

void dump_collector::forget(const jvm_identity& id) {
    boost::asio::post(io_, [this, id] {
        std::vector<collected_dump> out;
        {
            std::lock_guard lock(mutex_);
            drain();
            auto it = watched_.find(id);
            if (it == watched_.end()) return;
            // Gone: what it made is all it will write.
            if (it->second.file && !it->second.delivered) deliver(it->second);
            const int wd = it->second.wd;
            if (it->second.pending) out.push_back(std::move(*it->second.pending));
            watched_.erase(it);
            if (wd >= 0) release_watch(wd);
        }
        for (collected_dump& d : out) on_dump_(std::move(d));
    });
}

void dump_collector::read_events() {
    inotify_.async_read_some(boost::asio::buffer(buffer_), [this](const boost::system::error_code& ec, std::size_t n) {
        if (ec) return;  // cancelled: the daemon stops
        std::vector<collected_dump> out;
        {
            std::lock_guard lock(mutex_);
            parse(n);
            drain();
            for (auto& [id, w] : watched_)
                if (w.pending) out.push_back(std::move(*std::exchange(w.pending, std::nullopt)));
        }
        for (collected_dump& d : out) on_dump_(std::move(d));
        read_events();
    });
}

void dump_collector::drain() {
    for (;;) {
        const ssize_t n = ::read(inotify_.native_handle(), buffer_, sizeof buffer_);
        if (n <= 0) return;
        parse(static_cast<std::size_t>(n));
    }
}

void dump_collector::parse(std::size_t n) {
    for (std::size_t at = 0; at + sizeof(inotify_event) <= n;) {
        inotify_event e{};
        std::memcpy(&e, buffer_ + at, sizeof e);
        const std::size_t end = at + sizeof e + e.len;
        if (end > n) break;
        std::string_view name(buffer_ + at + sizeof e, e.len);
        name = name.substr(0, name.find('\0'));
        handle(e.wd, e.mask, name);
        at = end;
    }
}

void dump_collector::handle(int wd, std::uint32_t mask, std::string_view name) {
    for (auto& [id, w] : watched_) {
        if (w.delivered) continue;
        if (mask & IN_Q_OVERFLOW) {  // events lost: what is there now is taken (its end comes with the JVM's)
            (void)take(w, w.base);
            continue;
        }
        if (w.wd != wd) continue;
        if (mask & IN_IGNORED) {  // the directory is gone (its container's): what was made is all there is
            w.wd = -1;
            if (w.file) deliver(w);
            continue;
        }
        if (!is_dump_name(name, w.base)) continue;
        if (mask & (IN_CREATE | IN_MOVED_TO)) (void)take(w, name);
        if ((mask & IN_CLOSE_WRITE) && take(w, name) && w.file_name == name) deliver(w);
    }
}

bool dump_collector::take(watched& w, std::string_view name) {
    if (w.file) return true;
    // O_PATH opens nothing (no device, FIFO or link is acted on); reopened once known to be the
    // JVM user's regular file with one name.
    unique_fd path(::openat(w.dir_fd.get(), std::string(name).c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!path || ::fstat(path.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != w.target.uid ||
        st.st_nlink != 1 || st.st_ino == w.stale_ino)
        return false;
    unique_fd file(::open(("/proc/self/fd/" + std::to_string(path.get())).c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC));
    if (!file) return false;
    w.file = std::move(file);
    w.file_name = std::string(name);
    return true;
}

void dump_collector::deliver(watched& w) {
    w.delivered = true;
    collected_dump d;
    d.target = w.target;
    d.path = w.dir.empty() ? w.file_name : (w.dir == "/" ? "" : w.dir) + "/" + w.file_name;
    d.file = std::move(w.file);
    w.pending = std::move(d);
}

}  // namespace heapd::daemon
