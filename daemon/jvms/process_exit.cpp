#include "daemon/jvms/process_exit.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "attach/process_info.h"

namespace heapd::daemon {
namespace {

// include/uapi/linux/pidfd.h of Linux 6.15, which Debian 12's headers predate: the first 64 bytes
// of struct pidfd_info (PIDFD_INFO_SIZE_VER0); the kernel fills what the size in the request covers.
struct pidfd_info {
    std::uint64_t mask;
    std::uint64_t cgroupid;
    std::uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
    std::int32_t exit_code;
};
static_assert(sizeof(pidfd_info) == 64);
constexpr unsigned long pidfd_get_info = _IOWR(0xFF, 11, pidfd_info);
constexpr std::uint64_t pidfd_info_exit = 1u << 3;

#ifndef SYS_pidfd_open
constexpr long sys_pidfd_open = 434;
#else
constexpr long sys_pidfd_open = SYS_pidfd_open;
#endif

}  // namespace

exit_status exit_status_of(int wait_status, std::string source) {
    exit_status s;
    s.source = std::move(source);
    if (WIFEXITED(wait_status)) {
        s.known = true;
        s.code = WEXITSTATUS(wait_status);
    } else if (WIFSIGNALED(wait_status)) {
        s.known = true;
        s.signal = WTERMSIG(wait_status);
        s.core_dumped = WCOREDUMP(wait_status);
    }
    return s;
}

exit_status pidfd_exit_status(int pidfd) {
    pidfd_info info{};
    info.mask = pidfd_info_exit;
    if (::ioctl(pidfd, pidfd_get_info, &info) != 0 || (info.mask & pidfd_info_exit) == 0) return {};
    return exit_status_of(info.exit_code, "pidfd");
}

result<process_watch> process_watch::open(pid_t pid, std::uint64_t start_time) {
    const std::string who = "process " + std::to_string(pid);
    const long fd = ::syscall(sys_pidfd_open, pid, 0);
    if (fd < 0) {
        const int e = errno;
        if (e == ESRCH) return fail(error_code::no_such_process, who + " has ended");
        if (e == ENOSYS) return fail(error_code::unsupported, "pidfd_open: this kernel has no pidfds (Linux 5.3)");
        return fail(error_code::io, "pidfd_open " + who + ": " + std::strerror(e));
    }
    process_watch watch(unique_fd(static_cast<int>(fd)), pid, start_time);
    // The pid may have been reused between the caller reading start_time and the pidfd: the
    // pidfd names whatever holds the pid now, which must still be that process.
    auto info = attach::read_process_info(pid);
    if (!info || info->start_time != start_time) return fail(error_code::no_such_process, who + " has ended");
    return watch;
}

bool process_watch::exited() const {
    pollfd p{fd_.get(), POLLIN, 0};
    return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP)) != 0;
}

exit_status process_watch::status() const {
    if (exit_status s = pidfd_exit_status(fd_.get()); s.known) return s;
    if (auto zombie = attach::zombie_wait_status(pid_, start_time_)) return exit_status_of(*zombie, "zombie");
    return pidfd_exit_status(fd_.get());
}

}  // namespace heapd::daemon
