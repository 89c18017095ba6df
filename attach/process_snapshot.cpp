#include "attach/process_snapshot.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"

namespace heapd::attach {
namespace {

constexpr std::size_t kept_words = 2048;  // of the child's standard error, for the message

// Runs argv in a child with the target's ids (when we are root) and a clean environment, fd_a and
// fd_b as its descriptors 3 and 4 and out as its standard output (-1: none), until it ends or
// timeout passes; what it said on stderr (its end).
result<void> run_as_owner(const snapshot_target& t, std::vector<std::string> argv, int fd_a, int fd_b,
                          std::chrono::seconds timeout, int out = -1) {
    const bool root = ::geteuid() == 0;
    // Everything the child needs is made before fork: after it, only async-signal-safe calls.
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    char path_env[] = "PATH=/usr/bin:/bin", home_env[] = "HOME=/", lang_env[] = "LANG=C";
    char* env[] = {path_env, home_env, lang_env, nullptr};
    int err[2];
    if (::pipe2(err, O_CLOEXEC) != 0) return fail(error_code::io, std::string("pipe: ") + std::strerror(errno));
    unique_fd read_end(err[0]), write_end(err[1]);
    const pid_t child = ::fork();
    if (child < 0) return fail(error_code::io, std::string("fork: ") + std::strerror(errno));
    if (child == 0) {
        // Out of the way of 3 and 4 first, then into place.
        const int a = fd_a >= 0 ? ::fcntl(fd_a, F_DUPFD_CLOEXEC, 10) : -1;
        const int b = fd_b >= 0 ? ::fcntl(fd_b, F_DUPFD_CLOEXEC, 10) : -1;
        const int o = out >= 0 ? ::fcntl(out, F_DUPFD_CLOEXEC, 10) : -1;
        const int null = ::open("/dev/null", O_RDWR);
        if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(o >= 0 ? o : null, 1) < 0 || ::dup2(write_end.get(), 2) < 0)
            ::_exit(126);
        if (a >= 0 && ::dup2(a, 3) < 0) ::_exit(126);
        if (b >= 0 && ::dup2(b, 4) < 0) ::_exit(126);
        ::syscall(SYS_close_range, 5u, ~0u, 0u);
        if (root && (::setgroups(0, nullptr) != 0 || ::setresgid(t.gid, t.gid, t.gid) != 0 ||
                     ::setresuid(t.uid, t.uid, t.uid) != 0))
            ::_exit(125);
        ::execve(args[0], args.data(), env);
        ::_exit(127);
    }
    write_end.reset();
    std::string said;
    const auto end = std::chrono::steady_clock::now() + timeout;
    bool timed_out = false;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd p{read_end.get(), POLLIN, 0};
        const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
        if (n < 0 && errno != EINTR) break;
        if (n <= 0) continue;
        char buffer[4096];
        const ssize_t got = ::read(read_end.get(), buffer, sizeof buffer);
        if (got <= 0) break;  // the child closed it: it is ending
        said.append(buffer, static_cast<std::size_t>(got));
        if (said.size() > 2 * kept_words) said.erase(0, said.size() - kept_words);
    }
    if (timed_out) ::kill(child, SIGKILL);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    if (said.size() > kept_words) said.erase(0, said.size() - kept_words);
    const std::string who = argv[0];
    if (timed_out)
        return fail(error_code::not_responding, who + " did not finish in " + std::to_string(timeout.count()) + " s");
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return fail(error_code::io, who + " cannot be run (is it installed?)");
    if (WIFEXITED(status) && WEXITSTATUS(status) == 125)
        return fail(error_code::permission_denied, "cannot take uid " + std::to_string(t.uid) + " to run " + who);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return fail(error_code::io, who + " failed (status " + std::to_string(status) + "): " + said);
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

result<void> write_core(const snapshot_target& target, int core_fd, std::chrono::seconds timeout) {
    auto ran = run_as_owner(target,
                            {"/usr/bin/gdb", "-nx", "-batch", "-p", std::to_string(target.pid), "-ex",
                             "generate-core-file /proc/self/fd/3"},
                            core_fd, -1, timeout);
    if (!ran) return ran;
    if (size_of(core_fd) == 0)
        return fail(error_code::io, "gdb wrote no core of process " + std::to_string(target.pid));
    return {};
}

result<void> core_to_hprof(const snapshot_target& target, int core_fd, int hprof_fd, std::chrono::seconds timeout) {
    const std::string jhsdb = jhsdb_beside(target.exe);
    if (jhsdb.empty()) return fail(error_code::io, "no JDK known for the core (executable " + target.exe + ")");
    auto ran = run_as_owner(target,
                            {jhsdb, "jmap", "--binaryheap", "--dumpfile", "/proc/self/fd/4", "--exe", target.exe,
                             "--core", "/proc/self/fd/3"},
                            core_fd, hprof_fd, timeout);
    if (!ran) return ran;
    if (size_of(hprof_fd) == 0) return fail(error_code::io, jhsdb + " wrote no heap dump from the core");
    return {};
}

result<void> java_stacks_from_outside(const snapshot_target& target, int out_fd, std::chrono::seconds timeout) {
    const std::string jhsdb = jhsdb_beside(target.exe);
    if (jhsdb.empty()) return fail(error_code::io, "no JDK known for process " + std::to_string(target.pid));
    auto ran = run_as_owner(target, {jhsdb, "jstack", "--pid", std::to_string(target.pid)}, -1, -1, timeout, out_fd);
    if (!ran) return ran;
    if (size_of(out_fd) == 0) return fail(error_code::io, jhsdb + " printed no stacks");
    return {};
}

}  // namespace heapd::attach
