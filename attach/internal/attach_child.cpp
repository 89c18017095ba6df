#include "attach/internal/attach_child.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/child_process.h"
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
    close_all_but(keep);
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
    bool ok = converse(plan.names.socket, plan.listener, plan.attach_deadline, plan.idle_ms, plan.hard_deadline,
                       plan.watch, sink, failure);
    if (!ok && failure.refused && plan.may_trigger && !w.broken) {
        // The socket of a listener that is gone: left by an earlier process of the same pid (killed,
        // by the kernel's OOM killer say, in a container whose /tmp outlived it). Nothing of the
        // request went out; the name goes (it is the JVM's owner's, and we hold those rights) and
        // the listener is started as if it had never been there.
        ::unlinkat(plan.target.tmp_fd, plan.names.socket, 0);
        trigger_events events{&w, on_trigger};
        if (!start_listener(plan.target, plan.names, plan.attach_deadline, events, failure)) child_fail(w, failure);
        on_progress(&w);
        ok = converse(plan.names.socket, plan.listener, plan.attach_deadline, plan.idle_ms, plan.hard_deadline,
                      plan.watch, sink, failure);
    } else if (!ok && failure.refused && !w.broken) {
        set_failure(failure, plan.refuse_code, "%s (its attach socket is one nothing listens on)",
                    plan.refuse_message.c_str());
    }
    if (!ok) {
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

// The child's body for child_process::fork.
int child_body(int channel, const void* plan) { child_main(*static_cast<const child_plan*>(plan), channel); }

// The parent's side: the child's frames as they arrive, handed to the listener.
class frame_reader {
public:
    explicit frame_reader(const child_listener& listener) : listener_(listener) {}

    // Takes what arrived (and the descriptors that came with it); false when reading must stop: the
    // child reported its failure, or a callback failed. After `done` the child exits by itself.
    bool feed(std::string_view bytes, std::vector<unique_fd>& fds) {
        // The child sends one descriptor at a time: more than two waiting are closed.
        for (unique_fd& fd : fds)
            if (passed_.size() < 2) passed_.push_back(std::move(fd));
        pending_.append(bytes);
        std::size_t at = 0;
        while (pending_.size() - at >= header_size && !error_) {
            std::uint32_t length = 0;
            std::memcpy(&length, pending_.data() + at + 1, sizeof length);
            if (pending_.size() - at - header_size < length) break;
            const char type = pending_[at];
            const std::string_view payload(pending_.data() + at + header_size, length);
            at += header_size + length;
            frame(type, payload);
        }
        pending_.erase(0, at);
        return !error_;
    }
    bool done() const { return done_; }
    const std::optional<error_info>& error() const { return error_; }
    trigger_place trigger() const { return trigger_; }

private:
    void frame(char type, std::string_view payload) {
        if (type == frame_status && payload.size() == 8) {
            std::int32_t values[2];
            std::memcpy(values, payload.data(), sizeof values);
            if (listener_.on_status) listener_.on_status(values[0], values[1]);
        } else if (type == frame_output) {
            // The caller's callback must not leave the child unreaped: its exception becomes an error.
            try {
                if (listener_.on_output) listener_.on_output(payload);
            } catch (...) {
                error_ = error_info{error_code::io, "the output callback failed"};
            }
        } else if (type == frame_trigger && payload.size() == 1) {
            trigger_ = static_cast<trigger_place>(payload[0]);
        } else if (type == frame_error && !payload.empty()) {
            error_ = error_info{static_cast<error_code>(payload[0]), std::string(payload.substr(1))};
        } else if (type == frame_file && payload.size() == 4) {
            std::int32_t open_errno = 0;
            std::memcpy(&open_errno, payload.data(), sizeof open_errno);
            unique_fd file;
            if (open_errno == 0 && !passed_.empty()) {
                file = std::move(passed_.front());
                passed_.erase(passed_.begin());
            }
            if (listener_.on_file)
                listener_.on_file(file ? file.release() : -1, file || open_errno != 0 ? open_errno : EIO);
        } else if (type == frame_done) {
            done_ = true;
        }
    }

    const child_listener& listener_;
    std::string pending_;
    std::vector<unique_fd> passed_;  // descriptors received, in order, until their frame is read
    trigger_place trigger_ = trigger_place::none;
    std::optional<error_info> error_;
    bool done_ = false;
};

}  // namespace

result<void> run_attach_child(const child_plan& plan, const child_listener& listener) {
    auto child = child_process::fork(child_body, &plan);
    if (!child) return std::unexpected(child.error());
    // The child is never silent for longer than its attach phase or its idle limit, and it ends by
    // the hard deadline; past either (and a margin) it is stuck and gets killed.
    child_limits limits;
    limits.silence = std::chrono::milliseconds(std::max(plan.attach_deadline - monotonic_ms(), plan.idle_ms) + 3000);
    if (plan.hard_deadline > 0)
        limits.deadline =
            child_limits::clock::now() + std::chrono::milliseconds(plan.hard_deadline + 3000 - monotonic_ms());
    limits.cancelled = listener.cancelled;
    limits.max_fds = 2;
    frame_reader reader(listener);
    const child_read_end end = child->read(
        limits, [&](std::string_view bytes, std::vector<unique_fd>& fds) { return reader.feed(bytes, fds); });
    const child_exit exit = child->wait();
    // A child killed (or crashed) between making its trigger and removing it leaves the removal to us.
    if (reader.trigger() != trigger_place::none) remove_trigger(plan.target, plan.names, reader.trigger());
    if (end == child_read_end::cancelled) return fail(error_code::cancelled, "cancelled");
    if (reader.error()) return std::unexpected(*reader.error());
    if (end == child_read_end::deadline || end == child_read_end::silence)
        return fail(error_code::not_responding, "the attach helper process got no answer from the JVM and was stopped");
    if (!reader.done()) return fail(error_code::io, "the attach helper process " + exit.text() + " before finishing");
    return {};
}

}  // namespace heapd::attach
