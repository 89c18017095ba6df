#pragma once
// The agent's one request to heapd: dump this JVM now, it is making an OutOfMemoryError. A frame of
// heapd's protocol (formats/wire/protocol.h: a 4-byte big-endian length, then JSON) written by
// hand, since the agent links nothing but libc, and the replies read only as far as needed to know
// that the heap has been written: the thread that made the error waits that long, no longer.
#include <cstdint>
#include <string>
#include <string_view>

namespace heapd::agent {

// The request's frame: a dump of pid (as this process sees it; heapd maps a container's pid) with
// start_time (clock ticks after boot, so that a later process with the pid is not dumped),
// trigger "oom", oom_kind, and oom_error (what the error is and where it was made; bytes outside
// printable ASCII become '?', as the daemon need not take them on trust anyway), all objects (not
// only the reachable: an OutOfMemoryError's garbage is evidence), waiting for the job.
std::string dump_request_frame(long pid, std::uint64_t start_time, std::string_view oom_kind,
                               std::string_view oom_error);

// What one reply payload says: wait for the next, the heap is written (the job analyses it now, or
// is done), or heapd refused or failed.
enum class reply_meaning { waiting, written, failed };
reply_meaning read_reply(std::string_view payload);

// Sends the frame to heapd's socket and waits (at most wait_s seconds) until a reply says the heap
// is written. "" when it is; else why not (no daemon, refused, failed, timed out), for the caller.
std::string ask_for_dump(const std::string& socket_path, const std::string& frame, int wait_s);

}  // namespace heapd::agent
