#pragma once
// How a process the daemon is not the parent of ended. A pidfd (pidfd_open(2)) held while it runs
// becomes readable when it exits; Linux 6.15 and later then give its wait status through
// PIDFD_GET_INFO once it has been reaped, and until then /proc/PID/stat gives the zombie's. On an
// older kernel whose parent reaped it at once the status is lost: the caller says so.
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "base/error.h"
#include "base/unique_fd.h"

namespace heapd::daemon {

// How a process ended, as waitpid(2) reports it; known false when neither source had it.
struct exit_status {
    bool known = false;
    int code = 0;    // the exit code, when it exited (signal 0)
    int signal = 0;  // the signal that ended it, 0 when it exited
    bool core_dumped = false;
    std::string source;  // where it was read: "pidfd" or "zombie"
};

// exit_status of a wait status as waitpid(2) gives it.
exit_status exit_status_of(int wait_status, std::string source);

// A process watched for its end through a pidfd.
class process_watch {
public:
    // Opens the pidfd and checks that the pid still names the process that started at start_time:
    // no_such_process when it is gone (or is another process now), unsupported before Linux 5.3.
    static result<process_watch> open(pid_t pid, std::uint64_t start_time);

    pid_t pid() const { return pid_; }
    std::uint64_t start_time() const { return start_time_; }
    // Readable (poll(2) POLLIN) once the process has exited.
    int fd() const { return fd_.get(); }
    // Whether it has exited, without waiting.
    bool exited() const;
    // How it ended, once exited(): asks the pidfd, then the zombie, then the pidfd again (its
    // parent may reap it in between).
    exit_status status() const;

private:
    process_watch(unique_fd fd, pid_t pid, std::uint64_t start_time)
        : fd_(std::move(fd)), pid_(pid), start_time_(start_time) {}
    unique_fd fd_;
    pid_t pid_;
    std::uint64_t start_time_;
};

// The pidfd's answer alone (PIDFD_INFO_EXIT), for tests: known false before the process is reaped
// or on a kernel without it.
exit_status pidfd_exit_status(int pidfd);

}  // namespace heapd::daemon
