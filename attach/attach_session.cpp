#include "attach/attach_session.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>

#include "attach/internal/attach_capability.h"
#include "attach/internal/attach_child.h"
#include "attach/internal/listener_protocol.h"
#include "attach/process_info.h"

namespace heapd::attach {
namespace {

int open_dir(const std::string& path) { return ::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC); }

std::string describe(const process_info& p) { return "process " + std::to_string(p.pid) + " (" + p.name + ")"; }

// The identity check: the pid still names the process it named at first (and the one expected).
result<void> same_process(const process_info& first, std::uint64_t expected) {
    auto now = read_process_info(first.pid);
    if (!now) return std::unexpected(now.error());
    if (now->start_time != expected)
        return fail(error_code::no_such_process,
                    "pid " + std::to_string(first.pid) + " now names another process (started at tick " +
                        std::to_string(now->start_time) + ", expected " + std::to_string(expected) +
                        "): the process exited and its pid was reused");
    return {};
}

// Whether we may talk to the JVM at all: the listener takes root, or its own euid and egid.
result<void> check_permission(const process_info& target) {
    if (::geteuid() == 0 || (::geteuid() == target.euid && ::getegid() == target.egid)) return {};
    return fail(error_code::permission_denied, describe(target) + " runs as uid " + std::to_string(target.euid) +
                                                   " gid " + std::to_string(target.egid) +
                                                   "; its attach listener accepts only that uid and gid, or "
                                                   "root (this is uid " +
                                                   std::to_string(::geteuid()) + " gid " + std::to_string(::getegid()) +
                                                   ")");
}

// Why the JVM's listener must not be triggered, when it must not; checked only when no socket is
// there yet. Signalling is allowed only for a process that handles SIGQUIT and (when its maps can
// be read: jvm) maps libjvm.so, so no other process is ever signalled.
std::optional<error_info> refusal(const process_info& target, std::optional<bool> jvm) {
    if (!target.handles_sigquit()) {
        if (jvm && *jvm)
            return error_info{error_code::attach_disabled,
                              describe(target) +
                                  " is a JVM without a SIGQUIT handler (-Xrs) and has no attach "
                                  "socket: its attach listener cannot be started"};
        return error_info{error_code::not_a_jvm,
                          describe(target) + " does not handle SIGQUIT: not a running HotSpot JVM (not signalled)"};
    }
    if (attach_disabled(target).value_or(false))
        return error_info{error_code::attach_disabled,
                          describe(target) + " was started with -XX:+DisableAttachMechanism"};
    return std::nullopt;
}

// Adds what the process looks like now to a not_responding error, and why the listener may have
// closed the connection without a status: the ids only when they differ.
error_info explain(error_info error, const process_info& target, bool switched_ids) {
    const pid_t pid = target.pid;
    if (error.code == error_code::protocol && error.message.ends_with("without a status")) {
        auto now = read_process_info(pid);
        if (!now || now->start_time != target.start_time)
            error.message += ": " + describe(target) + " exited meanwhile";
        else if (!switched_ids && ::geteuid() != 0 && (::geteuid() != now->euid || ::getegid() != now->egid))
            error.message += " (HotSpot does so to a peer whose euid and egid are not its own)";
        else
            error.message += " (the JVM may be exiting, or did not take the request)";
        return error;
    }
    if (error.code != error_code::not_responding) return error;
    auto now = read_process_info(pid);
    if (now && now->stopped()) {
        error.message += "; the process is stopped (state " + std::string(1, now->state) +
                         ") and answers nothing until it is continued";
        return error;
    }
    error.message +=
        "; the JVM may be at a long safepoint (a long GC pause, or an -XX:OnOutOfMemoryError "
        "command still running) or hung";
    if (error.message.starts_with("no attach listener started"))
        error.message += ", or have attach disabled in a way not visible from outside (a flags file)";
    return error;
}

// The JVM to talk to, pinned: what /proc said of it, a pidfd (signals through it never reach a
// later owner of the pid), and whether it maps libjvm.so (nullopt: its maps cannot be read).
struct pinned_jvm {
    process_info info;
    unique_fd pidfd;
    std::optional<bool> jvm;
};

// Pins pid as the process asked for (and expected), one we may talk to, that is a JVM and not stopped.
result<pinned_jvm> pin_jvm(pid_t pid, const attach_options& options) {
    auto first = read_process_info(pid);
    if (!first) return std::unexpected(first.error());
    const process_info& target = *first;
    if (options.expected_start_time)
        if (auto same = same_process(target, *options.expected_start_time); !same) return std::unexpected(same.error());
    unique_fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (!pidfd)
        return errno == ESRCH ? fail(error_code::no_such_process, "no process " + std::to_string(pid))
                              : fail(error_code::io, std::string("pidfd_open: ") + std::strerror(errno));
    if (auto same = same_process(target, target.start_time); !same) return std::unexpected(same.error());
    if (auto allowed = check_permission(target); !allowed) return std::unexpected(allowed.error());
    // A process without HotSpot has no listener to talk to: said before anything is opened or sent.
    const std::optional<bool> jvm = maps_libjvm(pid);
    if (jvm && !*jvm)
        return fail(error_code::not_a_jvm,
                    describe(target) + " has no libjvm.so mapped: it is not a HotSpot JVM (not signalled)");
    if (target.stopped())
        return fail(error_code::not_responding, describe(target) + " is stopped (state " +
                                                    std::string(1, target.state) +
                                                    "): it answers nothing until it is continued (SIGCONT)");
    return pinned_jvm{*first, std::move(pidfd), jvm};
}

// Handles on the JVM's working directory, its /tmp and (for root, in a container) its mount
// namespace, valid whatever mount namespace we are in.
struct jvm_handles {
    unique_fd tmp, cwd, mnt;
};

result<jvm_handles> open_handles(const process_info& target) {
    const pid_t pid = target.pid;
    jvm_handles h;
    h.tmp.reset(open_jvm_tmp(pid));
    const int tmp_error = errno;
    if (!h.tmp && same_filesystem_view(pid)) h.tmp.reset(open_dir("/tmp"));
    if (!h.tmp)
        return tmp_error == EACCES || tmp_error == EPERM
                   ? fail(error_code::permission_denied,
                          "cannot open " + proc_path(pid, "root/tmp") + ": " + std::strerror(tmp_error))
                   : fail(error_code::io,
                          "cannot open the /tmp of " + describe(target) + ": " + std::strerror(tmp_error));
    h.cwd.reset(open_dir(proc_path(pid, "cwd")));
    if (::geteuid() == 0 && !same_filesystem_view(pid))
        h.mnt.reset(::open(proc_path(pid, "ns/mnt").c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC));
    // Opened through /proc/PID: make sure that is still our process.
    if (auto same = same_process(target, target.start_time); !same) return std::unexpected(same.error());
    return h;
}

// What the child is told and the parent hears: the reply, kept up to its bound.
struct session_reply {
    attach_reply reply;
    std::uint64_t left_out = 0;  // bytes of output beyond the bound

    child_listener listener(const attach_options& options, session_file* file) {
        child_listener l;
        l.on_status = [this](int status, int protocol) {
            reply.status = status;
            reply.protocol = protocol;
        };
        l.on_output = [this, &options](std::string_view bytes) {
            if (options.on_output) return options.on_output(bytes);
            const std::size_t room = options.max_output_bytes - std::min(options.max_output_bytes, reply.output.size());
            reply.output.append(bytes.substr(0, room));
            left_out += bytes.size() - std::min(room, bytes.size());
        };
        l.cancelled = options.cancelled;
        l.on_file = [file](int fd, int open_errno) {
            file->collected.reset(fd);
            file->collect_errno = open_errno;
        };
        return l;
    }
};

}  // namespace

std::string staging_name(std::string_view prefix, pid_t ns_pid, std::string_view suffix) {
    std::random_device random;
    char digits[17];
    std::snprintf(digits, sizeof digits, "%08x%08x", random(), random());
    return std::string(prefix) + std::to_string(ns_pid) + "-" + digits + std::string(suffix);
}

int open_jvm_tmp(pid_t pid) {
    unique_fd root(open_dir(proc_path(pid, "root")));
    if (!root) return -1;
    return ::openat(root.get(), "tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

result<attach_reply> run_session(pid_t pid, const attach_request& request, const attach_options& options,
                                 session_file* file, const session_install* install) {
    if (auto ok = check_request(request); !ok) return std::unexpected(ok.error());
    const std::int64_t start = monotonic_ms();
    auto pinned = pin_jvm(pid, options);
    if (!pinned) return std::unexpected(pinned.error());
    const process_info& target = pinned->info;
    auto handles = open_handles(target);
    if (!handles) return std::unexpected(handles.error());

    child_plan plan;
    plan.target =
        trigger_target{pinned->pidfd.get(), target.ns_pid, target.euid, handles->cwd.get(), handles->tmp.get()};
    plan.names = names_for(target.ns_pid);
    plan.mnt_ns_fd = handles->mnt.get();
    plan.switch_ids = ::geteuid() == 0 && target.euid != 0;  // root peers are accepted as they are
    plan.euid = target.euid;
    plan.egid = target.egid;
    const std::optional<error_info> refused = refusal(target, pinned->jvm);
    (void)clear_squatter(plan.target, plan.names);
    if (!listener_ready(plan.target, plan.names)) {
        if (refused) return std::unexpected(*refused);
        if (!options.may_signal)
            return fail(error_code::not_responding,
                        describe(target) + " has no attach listener up and may not be signalled now");
    }
    if (refused) {  // a socket is there: it is used, but if it has gone (or is stale) nothing is signalled
        plan.may_trigger = false;
        plan.refuse_code = refused->code;
        plan.refuse_message = refused->message;
    }
    if (!options.may_signal) {
        plan.may_trigger = false;  // the listener may go meanwhile: the child must not signal either
        plan.refuse_code = error_code::not_responding;
        plan.refuse_message = describe(target) + " has no attach listener up and may not be signalled now";
    }
    const prepared_request prepared = prepare(request, options);
    plan.listener = prepared.plan();
    const std::int64_t timeout = std::max<std::int64_t>(options.timeout.count(), 1);
    plan.attach_deadline = start + timeout;
    plan.idle_ms = timeout;
    plan.hard_deadline = hard_deadline_of(options, start);
    unique_fd watch_dir;
    if (file != nullptr) {
        if (!file->in_jvm_tmp) watch_dir.reset(open_dir(file->dir));
        plan.watch = progress_watch{file->in_jvm_tmp ? handles->tmp.get() : watch_dir.get(), file->name.c_str()};
        if (file->in_jvm_tmp) plan.collect_name = file->name.c_str();
    }
    if (install != nullptr) {
        plan.install_fd = install->fd;
        plan.install_name = install->name.c_str();
    }
    session_reply answer;
    if (auto ran = run_attach_child(plan, answer.listener(options, file)); !ran) {
        // A partial dump the JVM may still be writing: only its name goes (the JVM's /tmp is sticky,
        // so the name is ours or the JVM's owner's; unlinkat never follows a link).
        if (plan.collect_name != nullptr) ::unlinkat(handles->tmp.get(), plan.collect_name, 0);
        return std::unexpected(explain(ran.error(), target, plan.switch_ids));
    }
    if (answer.left_out != 0)
        answer.reply.output += "\n[" + std::to_string(answer.left_out) + " more bytes of the JVM's output not kept]\n";
    return std::move(answer.reply);
}

}  // namespace heapd::attach
