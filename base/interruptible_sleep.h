#pragma once
// A wait that Ctrl-C cuts short: for commands that start something in another process (sampling in
// a JVM), wait, then stop it, which must stop it all the same when the user interrupts the wait.

namespace heapd {

// Sleeps for seconds, or less when SIGINT or SIGTERM arrives (from then on both only end this wait:
// the process goes on to clean up); true when the wait ran its full time.
bool sleep_unless_interrupted(double seconds);

}  // namespace heapd
