#pragma once
// The HotSpot attach protocol, spoken with a JVM's attach listener (heapd's own protocol with
// heapctl is formats/wire/): request encodings (v1, and v2 of JDK 24+) and one conversation
// with a listener socket. The conversation allocates nothing and uses only system calls, so that
// the forked child which takes on a JVM's namespace and credentials can run it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "attach/attach_request.h"
#include "base/error.h"

namespace heapd::attach {

// Protocol v1 limits of HotSpot's AttachOperation: name length, argument length and count.
inline constexpr std::size_t v1_name_max = 16, v1_arg_max = 1024, v1_arg_count = 3;
// The status HotSpot answers a request in a protocol version it does not speak.
inline constexpr int status_bad_version = 101;

// Refuses requests no protocol can carry: no command, or a NUL inside a string.
result<void> check_request(const attach_request& request);
// The v1 bytes: "1\0cmd\0a0\0a1\0a2\0" (missing arguments empty); "" when beyond v1's limits.
std::string encode_v1(const attach_request& request);
// The v2 bytes: "2\0<size>\0cmd[ options]\0(arg\0)*", size being the byte count after its own NUL.
std::string encode_v2(const attach_request& request, std::string_view options);

// Milliseconds of CLOCK_MONOTONIC, one clock for every process of the machine.
std::int64_t monotonic_ms();

// When a conversation that began at start (monotonic ms) must be over: options.limit after it, or
// options.timeout when no limit is set.
std::int64_t hard_deadline_of(const attach_options& options, std::int64_t start);

// Why a conversation failed, kept in a fixed buffer: the forked child fills it without allocating
// and sends it to the parent, which turns it into an error_info.
struct listener_failure {
    error_code code = error_code::io;
    char message[384] = {};
    bool refused = false;  // the socket is there but nothing listens on it: no byte of the request went
};
// Sets the failure's code and printf-formatted message.
void set_failure(listener_failure& failure, error_code code, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

// A file whose growth shows the JVM at work (a heap dump being written) while no reply arrives.
struct progress_watch {
    int dir_fd = -1;             // its directory, -1 for no watch
    const char* name = nullptr;  // its name there
};

// Where a conversation's results go as they arrive; a false return abandons the conversation.
struct reply_sink {
    void* context = nullptr;
    bool (*status)(void* context, int status, int protocol) = nullptr;
    bool (*output)(void* context, const char* data, std::size_t size) = nullptr;
    bool (*progress)(void* context) = nullptr;  // a phase passed, or the watched file grew
};

// The prepared bytes of one request and the rule to choose among them.
struct listener_plan {
    protocol_choice protocol = protocol_choice::automatic;
    std::string_view v1;           // "" when the request does not fit v1
    std::string_view v2;           // without options
    std::string_view v2_options;   // with the options asked for ("" when none were)
    std::string_view option_name;  // what `getversion options` must list for v2_options to be sent
};

// One request encoded in every form it may travel in; plan() points into it, so it must outlive that.
struct prepared_request {
    std::string v1, v2, v2_options;
    protocol_choice protocol = protocol_choice::automatic;
    listener_plan plan() const { return listener_plan{protocol, v1, v2, v2_options, "streaming"}; }
};
// Encodes request for options.protocol, with the `streaming` option when options.streaming is set.
prepared_request prepare(const attach_request& request, const attach_options& options);

// Talks to the listener at socket_path (relative to the current directory unless absolute; at most
// 107 bytes). With protocol automatic or v2 it first asks `getversion` in v1 (answered by
// attach_deadline) to learn whether v2 is offered; then it sends the request and passes on the
// status line and the output until the JVM closes. The reply's bytes never extend a limit: it ends
// with not_responding idle_ms after the request was sent, or after the watched file last grew, and
// at hard_deadline whatever happens (monotonic ms).
bool converse(const char* socket_path, const listener_plan& plan, std::int64_t attach_deadline, std::int64_t idle_ms,
              std::int64_t hard_deadline, const progress_watch& watch, const reply_sink& sink,
              listener_failure& failure);

}  // namespace heapd::attach
