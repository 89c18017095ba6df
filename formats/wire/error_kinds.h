#pragma once
// The one place where library errors become the protocol's error kinds: what a client is told
// (and, through exits::exit_for, heapctl's exit status) when a request or job fails on an
// error_info.
#include "base/error.h"
#include "formats/protocol/protocol.h"

namespace heapd::wire {

// not_found for what is absent (a dump, a process, a JVM); permission_denied; cancelled;
// bad_input for a file that does not read as its format; internal for the operating system's
// failures and for what heapd wrote itself not reading back (corrupt); failed for the rest (a
// JVM that does not answer or refuses attach, a process another tracer holds, a timeout).
error_kind kind_of(error_code code);

}  // namespace heapd::wire
