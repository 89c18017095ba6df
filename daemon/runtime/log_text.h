#pragma once
// Text from outside the daemon (a client's file name, a JVM's attach reply, a dump's contents) made
// safe for one log line or one job record: bounded in length, with control characters and bytes
// that are not UTF-8 escaped, so nobody can forge a line of the log or bloat it.
#include <cstddef>
#include <string>
#include <string_view>

namespace heapd::daemon {

// At most max bytes of text (cut on a character boundary, "... (N more bytes)" added), with \n, \r,
// \t, \\ written so and other control characters and stray bytes as \xNN.
std::string bounded_text(std::string_view text, std::size_t max = 512);

// How much of a failure's message a job record keeps.
inline constexpr std::size_t max_job_error_bytes = 4096;

}  // namespace heapd::daemon
