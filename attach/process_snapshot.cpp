#include "attach/process_snapshot.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>
#include <string_view>
#include <vector>

#include "attach/process_info.h"
#include "base/child_process.h"
#include "base/unique_fd.h"

namespace heapd::attach {
namespace {

constexpr std::size_t kept_words = 2048;  // of the child's standard error, for the message

// The process groups of the helpers running now (each helper leads its own: owner_body).
std::mutex helpers_mutex;
std::set<pid_t> helper_groups;

// A helper's process group, known as one while it runs.
class helper_group {
public:
    explicit helper_group(pid_t pgid) : pgid_(pgid) {
        std::lock_guard lock(helpers_mutex);
        helper_groups.insert(pgid_);
    }
    ~helper_group() {
        std::lock_guard lock(helpers_mutex);
        helper_groups.erase(pgid_);
    }
    helper_group(const helper_group&) = delete;
    helper_group& operator=(const helper_group&) = delete;

private:
    pid_t pgid_;
};

// A pidfd of the target (which pins the process), checked to be the JVM asked for; -1 with the
// reason when it is gone or another process holds its pid now.
result<unique_fd> pin(const snapshot_target& t) {
    unique_fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, t.pid, 0)));
    if (!pidfd)
        return errno == ESRCH ? fail(error_code::no_such_process, "no process " + std::to_string(t.pid))
                              : fail(error_code::io, std::string("pidfd_open: ") + std::strerror(errno));
    if (t.start_time != 0) {
        auto now = read_process_info(t.pid);
        if (!now) return std::unexpected(now.error());
        if (now->start_time != t.start_time)
            return fail(error_code::no_such_process, "process " + std::to_string(t.pid) + " is another process now");
    }
    return pidfd;
}

// Waits for the process that runs the program in the JVM's pid namespace and ends as it did.
[[noreturn]] void end_as(pid_t inner) {
    int status = 0;
    while (::waitpid(inner, &status, 0) < 0)
        if (errno != EINTR) ::_exit(126);
    ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

// How a child reaches the JDK of a JVM in a container (none for a JVM that sees our filesystem).
enum class reach {
    host,  // as we are: the host's program
    live,  // the JVM's mount and pid namespaces, to read the live JVM by its pid there
    held,  // the JVM's mount namespace as held, and a pid namespace and /proc of its own: the JVM
           // may be gone, and with the first process of its pid namespace every other goes too
};

// What the child of run_as_owner needs, all of it made before the fork.
struct owner_run {
    const snapshot_target* target;
    reach how;
    bool root;
    pid_t parent;  // the daemon: the child and its program die with it
    int pidfd, fd_a, fd_b, out;
    char* const* args;
    char* const* env;
};

// The child: joins the JVM's namespaces when asked, takes the target's ids, and runs the program
// with its standard error into the channel. Only system calls: the parent may have threads.
int owner_body(int channel, const void* context) {
    const owner_run& r = *static_cast<const owner_run*>(context);
    // A process group of its own, which the program and any process it starts share: a cancel or a
    // timeout kills all of them. And it dies with the daemon (a kill -9, a stop past its grace).
    ::setpgid(0, 0);
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != r.parent) return 124;
    // Into the JVM's namespaces first, while we are still root. A pid namespace takes only the
    // children made after joining it: the program runs in one, and this process waits for it.
    if (r.how == reach::live && ::setns(r.pidfd, CLONE_NEWNS | CLONE_NEWPID) != 0) return 124;
    if (r.how == reach::held &&
        (::setns(r.target->mount_namespace, CLONE_NEWNS) != 0 || ::unshare(CLONE_NEWNS | CLONE_NEWPID) != 0))
        return 124;
    if (r.how != reach::host) {
        const pid_t inner = ::fork();
        if (inner < 0) return 124;
        if (inner > 0) end_as(inner);
        // The first of a new pid namespace: a /proc of its own, mounted in a copy of the
        // container's mounts that nothing else sees.
        if (r.how == reach::held && (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
                                     ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0))
            return 124;
        if (::chdir("/") != 0) return 124;
    }
    // Out of the way of 3 and 4 first, then into place.
    const int a = r.fd_a >= 0 ? ::fcntl(r.fd_a, F_DUPFD_CLOEXEC, 10) : -1;
    const int b = r.fd_b >= 0 ? ::fcntl(r.fd_b, F_DUPFD_CLOEXEC, 10) : -1;
    const int o = r.out >= 0 ? ::fcntl(r.out, F_DUPFD_CLOEXEC, 10) : -1;
    const int null = ::open("/dev/null", O_RDWR | O_NOCTTY);
    if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(o >= 0 ? o : null, 1) < 0 || ::dup2(channel, 2) < 0) return 126;
    if (a >= 0 && ::dup2(a, 3) < 0) return 126;
    if (b >= 0 && ::dup2(b, 4) < 0) return 126;
    ::syscall(SYS_close_range, 5u, ~0u, 0u);
    const snapshot_target& t = *r.target;
    if (r.root && (::setgroups(0, nullptr) != 0 || ::setresgid(t.gid, t.gid, t.gid) != 0 ||
                   ::setresuid(t.uid, t.uid, t.uid) != 0))
        return 125;
    // The program dies with its parent (the waiting process in a container, else the daemon): set
    // again after the ids change, which clears it.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return 126;
    if (r.how == reach::host && ::getppid() != r.parent) return 126;
    ::execve(r.args[0], r.args, r.env);
    return 127;
}

// Runs argv in a child with the target's ids (when we are root) and a clean environment, fd_a and
// fd_b as its descriptors 3 and 4 and out as its standard output (-1: none), until it ends or
// timeout passes or cancelled says so (checked every 200 ms: the program and its process group are
// killed then); what it said on stderr (its end). In a container, the child needs a /proc that
// shows it: without /proc/self neither the loader ($ORIGIN) nor /proc/self/fd/N work.
result<void> run_as_owner(const snapshot_target& t, std::vector<std::string> argv, int fd_a, int fd_b,
                          std::chrono::seconds timeout, int out = -1, reach how = reach::host,
                          const std::function<bool()>& cancelled = {}) {
    const bool root = ::geteuid() == 0;
    if (!t.in_container) how = reach::host;
    if (how != reach::host && !root)
        return fail(
            error_code::permission_denied,
            "process " + std::to_string(t.pid) + " sees another filesystem: only root may enter it to run " + argv[0]);
    unique_fd pidfd;
    if (how == reach::live) {
        auto pinned = pin(t);
        if (!pinned) return std::unexpected(pinned.error());
        pidfd = std::move(*pinned);
    }
    if (how == reach::held && t.mount_namespace < 0)
        return fail(error_code::io, "the mount namespace of process " + std::to_string(t.pid) + " was not held");
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    char path_env[] = "PATH=/usr/bin:/bin", home_env[] = "HOME=/", lang_env[] = "LANG=C";
    char* env[] = {path_env, home_env, lang_env, nullptr};
    const owner_run run{&t, how, root, ::getpid(), pidfd.get(), fd_a, fd_b, out, args.data(), env};
    auto child = child_process::fork(owner_body, &run);
    if (!child) return std::unexpected(child.error());
    const helper_group group(child->pid());
    pidfd.reset();
    child_limits limits;
    limits.deadline = child_limits::clock::now() + timeout;
    limits.cancelled = cancelled;
    std::string said;  // the end of it
    const child_read_end end = child->read(limits, [&](std::string_view bytes, std::vector<unique_fd>&) {
        said.append(bytes);
        if (said.size() > 2 * kept_words) said.erase(0, said.size() - kept_words);
        return true;
    });
    const child_exit exit = child->wait();
    if (said.size() > kept_words) said.erase(0, said.size() - kept_words);
    const std::string who = argv[0];
    if (end == child_read_end::cancelled) return fail(error_code::cancelled, who + " was stopped: cancelled");
    if (end == child_read_end::deadline)
        return fail(error_code::not_responding, who + " did not finish in " + std::to_string(timeout.count()) + " s");
    if (exit.status() == 127) return fail(error_code::io, who + " cannot be run (is it installed?)");
    if (exit.status() == 124)
        return fail(error_code::permission_denied,
                    "cannot join the namespaces of process " + std::to_string(t.pid) + " to run " + who);
    if (exit.status() == 125)
        return fail(error_code::permission_denied, "cannot take uid " + std::to_string(t.uid) + " to run " + who);
    if (exit.status() != 0) return fail(error_code::io, who + " failed (" + exit.text() + "): " + said);
    return {};
}

off_t size_of(int fd) {
    struct stat st {};
    return ::fstat(fd, &st) == 0 ? st.st_size : 0;
}

// The jhsdb of the JDK whose java is exe; empty when exe is no absolute path.
std::string jhsdb_beside(std::string_view exe) {
    const auto slash = exe.rfind('/');
    if (!exe.starts_with('/') || slash == std::string_view::npos) return {};
    return std::string(exe.substr(0, slash)) + "/jhsdb";
}

}  // namespace

bool is_helper_group(pid_t pgid) {
    std::lock_guard lock(helpers_mutex);
    return helper_groups.contains(pgid);
}

result<unique_fd> hold_mount_namespace(const snapshot_target& target) {
    auto pidfd = pin(target);
    if (!pidfd) return std::unexpected(pidfd.error());
    unique_fd ns(::open(proc_path(target.pid, "ns/mnt").c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC));
    const int open_error = errno;
    // Still alive after the open: the namespace is the pinned process's, not a later owner's of the pid.
    if (::syscall(SYS_pidfd_send_signal, pidfd->get(), 0, nullptr, 0) != 0)
        return fail(error_code::no_such_process, "process " + std::to_string(target.pid) + " is gone");
    if (!ns)
        return fail(open_error == EACCES || open_error == EPERM ? error_code::permission_denied : error_code::io,
                    "cannot open the mount namespace of process " + std::to_string(target.pid) + ": " +
                        std::strerror(open_error));
    return ns;
}

result<void> write_core(const snapshot_target& target, int core_fd, std::chrono::seconds timeout) {
    // gdb is the host's, given the host's pid: it needs no namespace.
    auto ran = run_as_owner(target,
                            {"/usr/bin/gdb", "-nx", "-batch", "-p", std::to_string(target.pid), "-ex",
                             "generate-core-file /proc/self/fd/3"},
                            core_fd, -1, timeout);
    if (!ran) return ran;
    if (size_of(core_fd) == 0)
        return fail(error_code::io, "gdb wrote no core of process " + std::to_string(target.pid));
    return {};
}

result<void> core_to_hprof(const snapshot_target& target, int core_fd, int hprof_fd, std::chrono::seconds timeout,
                           const std::function<bool()>& cancelled) {
    const std::string jhsdb = jhsdb_beside(target.exe);
    if (jhsdb.empty()) return fail(error_code::io, "no JDK known for the core (executable " + target.exe + ")");
    auto ran = run_as_owner(target,
                            {jhsdb, "jmap", "--binaryheap", "--dumpfile", "/proc/self/fd/4", "--exe", target.exe,
                             "--core", "/proc/self/fd/3"},
                            core_fd, hprof_fd, timeout, -1, reach::held, cancelled);
    if (!ran) return ran;
    if (size_of(hprof_fd) == 0) return fail(error_code::io, jhsdb + " wrote no heap dump from the core");
    return {};
}

result<void> java_stacks_from_outside(const snapshot_target& target, int out_fd, std::chrono::seconds timeout) {
    const std::string jhsdb = jhsdb_beside(target.exe);
    if (jhsdb.empty()) return fail(error_code::io, "no JDK known for process " + std::to_string(target.pid));
    const pid_t pid = target.in_container ? target.ns_pid : target.pid;
    auto ran =
        run_as_owner(target, {jhsdb, "jstack", "--pid", std::to_string(pid)}, -1, -1, timeout, out_fd, reach::live);
    if (!ran) return ran;
    if (size_of(out_fd) == 0) return fail(error_code::io, jhsdb + " printed no stacks");
    return {};
}

}  // namespace heapd::attach
