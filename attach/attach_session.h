#pragma once
// One attach operation on a JVM given by host pid, from the checks that need no attaching (is it
// there, is it the same process, may we, is it a JVM, does it allow attach, is it stopped) to the
// helper process that talks to it. attach_command() is the public face of this.
#include <sys/types.h>

#include <string>
#include <string_view>

#include "attach/attach_request.h"
#include "base/error.h"
#include "base/unique_fd.h"

namespace heapd::attach {

// A file the JVM writes for the request (a heap dump); its growth counts as the JVM answering.
// Either in a directory of ours (dir), or in the JVM's own /tmp (in_jvm_tmp), a directory its owner
// controls: that one is reached only through the descriptor the session opens on it, and once the
// JVM has answered the helper process opens the file with the JVM's rights (never through a link),
// removes its name and hands over the descriptor (collected). A session that fails removes the name.
struct session_file {
    std::string dir;  // a directory of ours, when not in_jvm_tmp
    std::string name;
    bool in_jvm_tmp = false;
    unique_fd collected{};  // out, in_jvm_tmp only: the file, or none (collect_errno says why)
    int collect_errno = 0;
};

// A file the session places in the JVM's /tmp before the request (attach_child.h's install): the
// contents of fd under a new name, as the JVM's user.
struct session_install {
    int fd = -1;
    std::string name;
};

// The JVM's /tmp through /proc/PID/root, as an O_PATH descriptor (-1 and errno on failure): the
// last step never follows a symbolic link (a link there would resolve against our root, not the
// JVM's: a container's "/tmp -> /etc" would be the host's /etc).
int open_jvm_tmp(pid_t pid);

// A name nobody else uses in the JVM's /tmp: prefix, the JVM's own pid, 16 random hex digits, suffix.
std::string staging_name(std::string_view prefix, pid_t ns_pid, std::string_view suffix);

// Runs request against the JVM with host pid `pid`; file and install may be null.
result<attach_reply> run_session(pid_t pid, const attach_request& request, const attach_options& options,
                                 session_file* file, const session_install* install = nullptr);

}  // namespace heapd::attach
