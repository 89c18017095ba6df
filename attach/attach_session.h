#pragma once
// One attach operation on a JVM given by host pid, from the checks that need no attaching (is it
// there, is it the same process, may we, is it a JVM, does it allow attach, is it stopped) to the
// helper process that talks to it. attach_command() is the public face of this.
#include <sys/types.h>

#include <string>

#include "attach/attach_error.h"
#include "attach/attach_request.h"

namespace heapd::attach {

// A file whose growth counts as the JVM answering (a heap dump being written): a directory the
// caller can open (a host path, through /proc/PID/root when the JVM's filesystem is not ours) and a name.
struct session_watch {
    std::string dir;
    std::string name;
};

// Runs request against the JVM with host pid `pid`; watch may be null.
attach_result<attach_reply> run_session(pid_t pid, const attach_request& request, const attach_options& options,
                                        const session_watch* watch);

} // namespace heapd::attach
