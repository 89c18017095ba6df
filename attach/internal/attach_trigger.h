#pragma once
// Starting a HotSpot JVM's attach listener: the `.attach_pid<nspid>` trigger file in its working
// directory (else its /tmp), SIGQUIT through a pidfd (so no signal reaches a reused pid), then a
// poll with backoff for its `.java_pid<nspid>` socket; the trigger is removed on every path.
// Allocation-free: the forked child that holds the JVM's credentials runs it.
#include <sys/types.h>

#include <cstdint>

#include "attach/internal/listener_protocol.h"

namespace heapd::attach {

// The JVM to start a listener in, as directory handles that stay valid in any mount namespace.
struct trigger_target {
    int pidfd = -1;     // the JVM process
    pid_t ns_pid = -1;  // its pid in its own pid namespace: part of the file names
    uid_t euid = 0;     // owner of its socket, and of a trigger file it trusts (root's too)
    int cwd_fd = -1;    // O_PATH handle of its working directory, -1 when unknown
    int tmp_fd = -1;    // O_PATH handle of its /tmp
};

// The names of the listener's socket and of the trigger file, in fixed buffers.
struct attach_names {
    char socket[32] = {};   // .java_pid<nspid>
    char trigger[32] = {};  // .attach_pid<nspid>
};
attach_names names_for(pid_t ns_pid);

// Removes what lies at the JVM's attach socket name when it is not the JVM's own: a socket, link or
// file of another user's, planted in the sticky /tmp where the JVM may not replace it, so that its
// listener could never start (nor its owner's jcmd reach it). Only root may remove another user's
// name; a directory is left. The name only (unlinkat, nothing followed). True when one went.
bool clear_squatter(const trigger_target& target, const attach_names& names);

// Where a trigger file lies (the letters travel in the child's reports to its parent).
enum class trigger_place : char { none = 'n', cwd = 'c', tmp = 't' };

// Told each time a trigger file is made or removed, so another process can clean up after a crash.
struct trigger_events {
    void* context = nullptr;
    void (*changed)(void* context, trigger_place place) = nullptr;
};

// Whether the JVM's listener socket is there: a socket, owned by the JVM's euid.
bool listener_ready(const trigger_target& target, const attach_names& names);

// Creates the trigger, sends SIGQUIT, and waits until deadline for the socket (sending SIGQUIT once
// more halfway, as the JDK's client does). Fails with no_such_process if the JVM exits meanwhile,
// not_responding if no socket appears.
bool start_listener(const trigger_target& target, const attach_names& names, std::int64_t deadline,
                    const trigger_events& events, listener_failure& failure);

// Removes a trigger file at place (used by the parent when its child died before doing so).
void remove_trigger(const trigger_target& target, const attach_names& names, trigger_place place);

}  // namespace heapd::attach
