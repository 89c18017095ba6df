#pragma once
// The exit statuses of heapd and heapctl, all in one place (documented in their --help and in
// docs/daemon.md): 0 to 2 mean the same for both programs, the rest is each program's own.
#include "formats/wire/protocol.h"

namespace heapd::wire::exits {

// An exit status.
enum exit_code : int {
    ok = 0,
    usage = 1,      // bad command line
    bad_input = 2,  // the file cannot be opened or is not a heap dump heapd can read
    // heapctl
    no_daemon = 3,          // heapd is not running or cannot be reached
    denied = 4,             // heapd refused: the dump or job belongs to another user
    not_found = 5,          // no such dump or job
    failed = 6,             // the job failed or was cancelled, no space, busy, or another refusal
    protocol_mismatch = 7,  // heapd speaks another protocol version, or replied nonsense
    // heapd serve
    cannot_serve = 3,  // the daemon could not start serving
    // heapd attach
    jvm_failed = 3,     // the JVM answered with a failure status
    attach_failed = 4,  // attaching failed (the message names the error code)
};

// heapctl's exit status for an error reply of the daemon.
inline exit_code exit_for(wire::error_kind kind) {
    switch (kind) {
    case wire::error_kind::permission_denied: return denied;
    case wire::error_kind::not_found: return not_found;
    case wire::error_kind::bad_input: return bad_input;
    case wire::error_kind::unsupported_version:
    case wire::error_kind::unknown_type: return protocol_mismatch;
    default: return failed;
    }
}

}  // namespace heapd::wire::exits
