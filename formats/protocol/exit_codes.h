#pragma once
// heapctl's exit statuses, as documented in its --help and the README.
#include "formats/protocol/protocol.h"

namespace heapd::ctl {

enum exit_code : int {
    ok = 0,
    usage = 1,              // bad command line
    bad_input = 2,          // the file cannot be opened or is not a heap dump heapd can read
    no_daemon = 3,          // heapd is not running or cannot be reached
    denied = 4,             // heapd refused: the dump or job belongs to another user
    not_found = 5,          // no such dump or job
    failed = 6,             // the job failed or was cancelled, no space, busy, or another refusal
    protocol_mismatch = 7,  // heapd speaks another protocol version, or replied nonsense
};

// The exit status for an error reply of the daemon.
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

} // namespace heapd::ctl
