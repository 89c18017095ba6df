#include "attach/internal/attach_child.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/fd_io.h"
#include "base/unique_fd.h"
#include "base/unix_socket.h"

namespace heapd::attach {
namespace {

// The child's reports: a type letter, a 4-byte native-endian length, then the payload.
enum frame_type : char {
    frame_status = 'S',    // int32 status, int32 protocol
    frame_output = 'O',    // reply bytes
    frame_progress = 'P',  // still working
    frame_trigger = 'T',   // one byte: where a trigger file now lies (trigger_place)
    frame_error = 'E',     // one byte error_code, then the message
    frame_file = 'F',      // int32 errno of the open; when 0 the file's descriptor rides along (SCM_RIGHTS)
    frame_done = 'D',
};
constexpr std::size_t header_size = 5;

// The child's end of the pipe; once a write fails (the parent is gone) nothing more is sent.
struct frame_writer {
    int fd = -1;
    bool broken = false;
};

bool send_frame(frame_writer& w, char type, const void* data, std::size_t size) {
    if (w.broken) return false;
    char header[header_size];
    header[0] = type;
    auto length = static_cast<std::uint32_t>(size);
    std::memcpy(header + 1, &length, sizeof length);
    w.broken = !write_all(w.fd, header, sizeof header) || !write_all(w.fd, static_cast<const char*>(data), size);
    return !w.broken;
}

// A frame carrying a descriptor: header and payload in one message, the descriptor attached to it.
bool send_file_frame(frame_writer& w, int fd, std::int32_t open_errno) {
    if (w.broken) return false;
    char frame[header_size + sizeof open_errno];
    frame[0] = frame_file;
    auto length = static_cast<std::uint32_t>(sizeof open_errno);
    std::memcpy(frame + 1, &length, sizeof length);
    std::memcpy(frame + header_size, &open_errno, sizeof open_errno);
    const ssize_t n = send_with_fd(w.fd, frame, sizeof frame, fd);
    w.broken = n != static_cast<ssize_t>(sizeof frame);
    return !w.broken;
}

// Opens the file the JVM wrote with the rights this child has now (the JVM's, or root's for a root
// JVM), never through a symbolic link and never blocking on a FIFO, removes its name so that
// nothing else can be swapped in under it, and hands the descriptor to the parent. The parent checks
// what it got (a regular file of the JVM's user with no other name) before reading a byte.
void collect(frame_writer& w, int dir_fd, const char* name) {
    int fd = ::openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    std::int32_t open_errno = fd < 0 ? errno : 0;
    ::unlinkat(dir_fd, name, 0);
    send_file_frame(w, fd, open_errno);
    if (fd >= 0) ::close(fd);
}

bool on_status(void* context, int status, int protocol) {
    std::int32_t payload[2] = {status, protocol};
    return send_frame(*static_cast<frame_writer*>(context), frame_status, payload, sizeof payload);
}

bool on_output(void* context, const char* data, std::size_t size) {
    return send_frame(*static_cast<frame_writer*>(context), frame_output, data, size);
}

bool on_progress(void* context) { return send_frame(*static_cast<frame_writer*>(context), frame_progress, "", 0); }

void on_trigger(void* context, trigger_place place) {
    char letter = static_cast<char>(place);
    send_frame(*static_cast<frame_writer*>(context), frame_trigger, &letter, 1);
}

[[noreturn]] void child_fail(frame_writer& w, const listener_failure& failure) {
    char payload[1 + sizeof failure.message];
    payload[0] = static_cast<char>(failure.code);
    std::size_t length = ::strnlen(failure.message, sizeof failure.message);
    std::memcpy(payload + 1, failure.message, length);
    send_frame(w, frame_error, payload, 1 + length);
    ::_exit(0);
}

// Closes every descriptor above stderr but the plan's and out_fd: the child outlives a parent that
// is killed (to remove what the JVM wrote), and must not keep the parent's store lock, client
// sockets or files open meanwhile, least of all with the JVM's uid.
void close_others(const child_plan& plan, int out_fd) {
    int keep[] = {out_fd,         plan.target.pidfd, plan.target.cwd_fd, plan.target.tmp_fd,
                  plan.mnt_ns_fd, plan.watch.dir_fd, plan.install_fd};
    constexpr int count = sizeof keep / sizeof keep[0];
    for (int i = 1; i < count; ++i)  // insertion sort: no allocation after fork
        for (int j = i; j > 0 && keep[j - 1] > keep[j]; --j) std::swap(keep[j - 1], keep[j]);
    unsigned low = 3;
    for (int fd : keep) {
        if (fd < static_cast<int>(low)) continue;
        if (static_cast<unsigned>(fd) > low) ::close_range(low, static_cast<unsigned>(fd) - 1, 0);
        low = static_cast<unsigned>(fd) + 1;
    }
    ::close_range(low, ~0u, 0);
}

// Places plan.install_fd's contents at plan.install_name in the JVM's /tmp, as the identity the
// child has taken; false with the failure set.
bool install(const child_plan& plan, listener_failure& failure) {
    int out =
        ::openat(plan.target.tmp_fd, plan.install_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0) {
        set_failure(failure, error_code::io, "cannot create /tmp/%s in the JVM's filesystem: %s", plan.install_name,
                    std::strerror(errno));
        return false;
    }
    off_t offset = 0;
    for (;;) {
        ssize_t n = ::sendfile(out, plan.install_fd, &offset, 1 << 20);
        if (n == 0) break;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            set_failure(failure, error_code::io, "cannot write /tmp/%s in the JVM's filesystem: %s", plan.install_name,
                        std::strerror(errno));
            ::unlinkat(plan.target.tmp_fd, plan.install_name, 0);
            ::close(out);
            return false;
        }
    }
    ::close(out);
    return true;
}

// The child: only system calls and fixed buffers from here on (the parent may have had threads).
[[noreturn]] void child_main(const child_plan& plan, int out_fd) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, nullptr);
    close_others(plan, out_fd);
    frame_writer w{out_fd};
    listener_failure failure;
    // Joining the JVM's mount namespace makes its filesystem ours; the handles opened by the parent
    // stay valid either way, so a refusal (no CAP_SYS_ADMIN) is not fatal.
    if (plan.mnt_ns_fd >= 0) ::setns(plan.mnt_ns_fd, CLONE_NEWNS);
    if (plan.switch_ids) {
        ::setgroups(0, nullptr);
        if (::setegid(plan.egid) != 0 || ::seteuid(plan.euid) != 0) {
            set_failure(failure, error_code::permission_denied, "cannot take the JVM's uid %u and gid %u: %s",
                        static_cast<unsigned>(plan.euid), static_cast<unsigned>(plan.egid), std::strerror(errno));
            child_fail(w, failure);
        }
    }
    if (plan.install_name != nullptr && !install(plan, failure)) child_fail(w, failure);
    if (!listener_ready(plan.target, plan.names)) {
        if (!plan.may_trigger) {
            set_failure(failure, plan.refuse_code, "%s", plan.refuse_message.c_str());
            child_fail(w, failure);
        }
        trigger_events events{&w, on_trigger};
        if (!start_listener(plan.target, plan.names, plan.attach_deadline, events, failure)) child_fail(w, failure);
        on_progress(&w);
    }
    // Connecting by a relative name keeps the socket path short and independent of /proc.
    if (::fchdir(plan.target.tmp_fd) != 0) {
        set_failure(failure, error_code::io, "cannot enter the JVM's /tmp: %s", std::strerror(errno));
        child_fail(w, failure);
    }
    reply_sink sink{&w, on_status, on_output, on_progress};
    if (!converse(plan.names.socket, plan.listener, plan.attach_deadline, plan.idle_ms, plan.hard_deadline, plan.watch,
                  sink, failure)) {
        // A partial file (the JVM failed, went silent, or our parent is gone) loses its name here; the
        // JVM may still write to it, and the space is freed when it closes the file.
        if (plan.collect_name != nullptr) ::unlinkat(plan.target.tmp_fd, plan.collect_name, 0);
        if (w.broken) ::_exit(0);
        child_fail(w, failure);
    }
    if (plan.collect_name != nullptr) collect(w, plan.target.tmp_fd, plan.collect_name);
    send_frame(w, frame_done, "", 0);
    ::_exit(0);
}

// Reaps the child, retrying on interruption.
int reap(pid_t child) {
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    return status;
}

}  // namespace

result<void> run_attach_child(const child_plan& plan, const child_listener& listener) {
    int pipe_fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pipe_fds) != 0)
        return fail(error_code::io, std::string("socketpair: ") + std::strerror(errno));
    pid_t child = ::fork();
    if (child < 0) {
        int e = errno;
        ::close(pipe_fds[0]);
        ::close(pipe_fds[1]);
        return fail(error_code::io, std::string("fork: ") + std::strerror(e));
    }
    if (child == 0) {
        ::close(pipe_fds[0]);
        child_main(plan, pipe_fds[1]);
    }
    ::close(pipe_fds[1]);
    const int in = pipe_fds[0];

    // The child is never silent for longer than its attach phase or its idle limit, and it ends by
    // the hard deadline; past either (and a margin) it is stuck and gets killed.
    const std::int64_t silence_limit = std::max(plan.attach_deadline - monotonic_ms(), plan.idle_ms) + 3000;
    const std::int64_t end_by = plan.hard_deadline > 0 ? plan.hard_deadline + 3000 : INT64_MAX;
    std::int64_t last_heard = monotonic_ms();
    std::string pending;
    trigger_place trigger = trigger_place::none;
    std::optional<error_info> error;
    bool done = false, killed = false;
    std::vector<unique_fd> passed;  // descriptors received, in order, until their frame is read
    char buffer[65536];
    while (!done && !error) {
        std::int64_t left = std::min(last_heard + silence_limit, end_by) - monotonic_ms();
        if (left <= 0) {
            ::kill(child, SIGKILL);
            killed = true;
            break;
        }
        if (listener.cancelled && listener.cancelled()) {
            ::kill(child, SIGKILL);
            error = error_info{error_code::cancelled, "cancelled"};
            break;
        }
        pollfd p{in, POLLIN, 0};
        int ready = ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left, 200)));
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) continue;
        // The child sends one descriptor at most: anything more is closed.
        ssize_t n = receive_with_fds(in, buffer, sizeof buffer, 0, passed, 2);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        last_heard = monotonic_ms();
        pending.append(buffer, static_cast<std::size_t>(n));
        std::size_t at = 0;
        while (pending.size() - at >= header_size && !done && !error) {
            std::uint32_t length = 0;
            std::memcpy(&length, pending.data() + at + 1, sizeof length);
            if (pending.size() - at - header_size < length) break;
            char type = pending[at];
            std::string_view payload(pending.data() + at + header_size, length);
            at += header_size + length;
            if (type == frame_status && length == 8) {
                std::int32_t values[2];
                std::memcpy(values, payload.data(), sizeof values);
                if (listener.on_status) listener.on_status(values[0], values[1]);
            } else if (type == frame_output) {
                // The caller's callback must not leave the child unreaped: its exception becomes an error.
                try {
                    if (listener.on_output) listener.on_output(payload);
                } catch (...) {
                    ::kill(child, SIGKILL);
                    error = error_info{error_code::io, "the output callback failed"};
                }
            } else if (type == frame_trigger && length == 1) {
                trigger = static_cast<trigger_place>(payload[0]);
            } else if (type == frame_error && length >= 1) {
                error = error_info{static_cast<error_code>(payload[0]), std::string(payload.substr(1))};
            } else if (type == frame_file && length == 4) {
                std::int32_t open_errno = 0;
                std::memcpy(&open_errno, payload.data(), sizeof open_errno);
                unique_fd file;
                if (open_errno == 0 && !passed.empty()) {
                    file = std::move(passed.front());
                    passed.erase(passed.begin());
                }
                if (listener.on_file)
                    listener.on_file(file ? file.release() : -1, file || open_errno != 0 ? open_errno : EIO);
            } else if (type == frame_done) {
                done = true;
            }
        }
        pending.erase(0, at);
    }
    ::close(in);
    int status = reap(child);
    // A child killed (or crashed) between making its trigger and removing it leaves the removal to us.
    if (trigger != trigger_place::none) remove_trigger(plan.target, plan.names, trigger);
    if (error) return std::unexpected(*error);
    if (killed)
        return fail(error_code::not_responding, "the attach helper process got no answer from the JVM and was stopped");
    if (!done) {
        std::string how = WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                              : "exited with status " + std::to_string(WEXITSTATUS(status));
        return fail(error_code::io, "the attach helper process " + how + " before finishing");
    }
    return {};
}

}  // namespace heapd::attach
