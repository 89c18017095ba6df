#pragma once
// The one place where library errors become the protocol's error kinds: what a client is told
// (and, through wire::exits::exit_for, heapctl's exit status) when a request or job fails on an
// error_info.
#include "base/error.h"
#include "formats/wire/protocol.h"

namespace heapd::wire {

// not_found for what is absent (a dump, a process, a JVM); permission_denied; cancelled;
// bad_input for a file that does not read as its format; no_space; busy; internal for the operating
// system's failures, for what heapd wrote itself not reading back (corrupt) and for bugs; failed
// for the rest (a JVM that does not answer or refuses, a process another tracer holds, a timeout,
// a helper that crashed).
error_kind kind_of(error_code code);

}  // namespace heapd::wire
