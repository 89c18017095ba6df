#pragma once
// Runs one attach conversation in a forked child that joins the JVM's mount namespace and takes its
// effective uid/gid (the listener accepts no other peer but root), and streams what it hears back
// to the parent over a socket pair. The calling process never changes namespace or credentials; a
// child that overruns its time is killed and any trigger file it left is removed by the parent.
// A file the JVM wrote in its /tmp (a heap dump) is opened by the child, with the JVM's rights and
// never through a symbolic link, and only its descriptor is handed back: the parent, root or not,
// never resolves a name the JVM's owner controls.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "attach/internal/attach_trigger.h"
#include "attach/internal/listener_protocol.h"
#include "base/error.h"

namespace heapd::attach {

// Everything the child needs, prepared (and every handle opened) by the parent before fork.
struct child_plan {
    trigger_target target;
    attach_names names;
    int mnt_ns_fd = -1;       // the JVM's mount namespace to join, -1 to stay in ours
    bool switch_ids = false;  // take the JVM's egid/euid (dropping supplementary groups) first
    uid_t euid = 0;
    gid_t egid = 0;
    bool may_trigger = true;  // false: a missing socket is an error (refuse_code, refuse_message)
    error_code refuse_code = error_code::not_a_jvm;
    std::string refuse_message;
    listener_plan listener;
    std::int64_t attach_deadline = 0;  // monotonic ms
    std::int64_t idle_ms = 10000;      // from the request, or from the watched file's last growth
    std::int64_t hard_deadline = 0;    // monotonic ms: the conversation ends then, whatever happens
    progress_watch watch;
    // A name in the JVM's /tmp (target.tmp_fd) to collect once the JVM has answered: opened as above
    // (O_NOFOLLOW, O_NONBLOCK), its name removed, and the descriptor handed to on_file. Null: none.
    const char* collect_name = nullptr;
    // A file to place in the JVM's /tmp (target.tmp_fd) before the request, with install_fd's
    // contents: created new (O_EXCL, never through a link, mode 0600) as the JVM's user, in its mount
    // namespace (heapd's agent library, for a JVM that cannot see ours). Null: none.
    const char* install_name = nullptr;
    int install_fd = -1;
};

// What the parent hears from the child, as it arrives.
struct child_listener {
    std::function<void(int status, int protocol)> on_status;
    std::function<void(std::string_view output)> on_output;
    // The collected file: its descriptor (owned by the callee from then on), or -1 and the errno of
    // the open (ENOENT: the JVM wrote nothing).
    std::function<void(int fd, int open_errno)> on_file;
    // Asked several times a second; true kills the child and ends with cancelled.
    std::function<bool()> cancelled;
};

// Forks the child, relays its reports and reaps it; the error is the child's own, not_responding
// when it fell silent for longer than its own limits allow or outlived the hard deadline, or
// cancelled.
result<void> run_attach_child(const child_plan& plan, const child_listener& listener);

}  // namespace heapd::attach
