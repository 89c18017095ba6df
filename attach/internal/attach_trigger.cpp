#include "attach/internal/attach_trigger.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace heapd::attach {
namespace {

int signal_quit(int pidfd) { return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, SIGQUIT, nullptr, 0)); }

// Makes the trigger file in dir unless one the JVM trusts is there already; false (errno kept in
// error) when neither is possible. A file of the wrong owner is never trusted by the JVM.
bool make_trigger(int dir, const trigger_target& target, const attach_names& names, int& error) {
    if (dir < 0) return false;
    int fd = ::openat(dir, names.trigger, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    bool created = fd >= 0;
    if (!created && errno == EEXIST)
        fd = ::openat(dir, names.trigger, O_RDONLY | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        error = errno;
        return false;
    }
    struct stat st {};
    // Some filesystems give new files another owner (root squashing, say): HotSpot ignores those.
    bool trusted = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_uid == target.euid || st.st_uid == 0);
    ::close(fd);
    if (!trusted) {
        if (created) ::unlinkat(dir, names.trigger, 0);
        error = EPERM;
        return false;
    }
    return true;
}

// Makes the trigger in the working directory, else in /tmp (where HotSpot looks, in that order).
trigger_place create_trigger(const trigger_target& target, const attach_names& names, const trigger_events& events,
                             int& error) {
    trigger_place place = trigger_place::none;
    if (make_trigger(target.cwd_fd, target, names, error))
        place = trigger_place::cwd;
    else if (make_trigger(target.tmp_fd, target, names, error))
        place = trigger_place::tmp;
    if (place != trigger_place::none && events.changed) events.changed(events.context, place);
    return place;
}

void drop_trigger(const trigger_target& target, const attach_names& names, trigger_place& place,
                  const trigger_events& events) {
    if (place == trigger_place::none) return;
    remove_trigger(target, names, place);
    place = trigger_place::none;
    if (events.changed) events.changed(events.context, place);
}

}  // namespace

attach_names names_for(pid_t ns_pid) {
    attach_names names;
    std::snprintf(names.socket, sizeof names.socket, ".java_pid%d", static_cast<int>(ns_pid));
    std::snprintf(names.trigger, sizeof names.trigger, ".attach_pid%d", static_cast<int>(ns_pid));
    return names;
}

bool clear_squatter(const trigger_target& target, const attach_names& names) {
    struct stat st {};
    if (::geteuid() != 0 || target.tmp_fd < 0 ||
        ::fstatat(target.tmp_fd, names.socket, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_uid == target.euid ||
        S_ISDIR(st.st_mode))
        return false;
    return ::unlinkat(target.tmp_fd, names.socket, 0) == 0;
}

bool listener_ready(const trigger_target& target, const attach_names& names) {
    struct stat st {};
    return target.tmp_fd >= 0 && ::fstatat(target.tmp_fd, names.socket, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           S_ISSOCK(st.st_mode) && st.st_uid == target.euid;
}

void remove_trigger(const trigger_target& target, const attach_names& names, trigger_place place) {
    int dir = place == trigger_place::cwd ? target.cwd_fd : place == trigger_place::tmp ? target.tmp_fd : -1;
    if (dir >= 0) ::unlinkat(dir, names.trigger, 0);
}

bool start_listener(const trigger_target& target, const attach_names& names, std::int64_t deadline,
                    const trigger_events& events, listener_failure& failure) {
    const std::int64_t start = monotonic_ms();
    int error = 0;
    trigger_place place = create_trigger(target, names, events, error);
    if (place == trigger_place::none) {
        set_failure(failure, error == EACCES || error == EPERM ? error_code::permission_denied : error_code::io,
                    "cannot create the trigger file %s in the JVM's working directory or /tmp: %s", names.trigger,
                    std::strerror(error));
        return false;
    }
    if (signal_quit(target.pidfd) != 0) {
        int e = errno;
        drop_trigger(target, names, place, events);
        set_failure(failure,
                    e == ESRCH   ? error_code::no_such_process
                    : e == EPERM ? error_code::permission_denied
                                 : error_code::io,
                    "cannot send SIGQUIT: %s", std::strerror(e));
        return false;
    }
    const std::int64_t halfway = start + (deadline - start) / 2;
    bool resent = false;
    std::int64_t delay = 10;
    for (;;) {
        if (listener_ready(target, names)) {
            drop_trigger(target, names, place, events);
            return true;
        }
        std::int64_t now = monotonic_ms();
        if (now >= deadline) {
            drop_trigger(target, names, place, events);
            set_failure(failure, error_code::not_responding, "no attach listener started within %lld ms of SIGQUIT",
                        static_cast<long long>(now - start));
            return false;
        }
        // A pidfd turns readable when its process exits: the wait doubles as a liveness check.
        pollfd p{target.pidfd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(std::min(delay, deadline - now))) > 0) {
            drop_trigger(target, names, place, events);
            set_failure(failure, error_code::no_such_process, "the process exited while attaching");
            return false;
        }
        delay = std::min<std::int64_t>(delay * 3 / 2 + 10, 250);
        if (!resent && monotonic_ms() >= halfway && !listener_ready(target, names)) {
            resent = true;
            if (place == trigger_place::none) place = create_trigger(target, names, events, error);
            signal_quit(target.pidfd);
        }
    }
}

}  // namespace heapd::attach
