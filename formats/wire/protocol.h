#pragma once
// The protocol between heapd and heapctl: length-prefixed JSON messages over a Unix stream socket.
//
// A frame is a 4-byte big-endian payload length, then that many bytes of UTF-8 JSON (at most
// max_message_bytes). Every payload is an object with "v" (the protocol version), "id" (the request
// id, chosen by the client; replies carry the id of the request they answer, 0 when it could not be
// read) and "type". Requests carry "args" (an object); replies are of type "result" (with "result",
// an object), "error" (with "error": {"code", "message"}) or "progress" (with "progress": {"job",
// "phase", "done", "total"}), any number of progress events before one result or error.
// Versions: 2 names the analysis of a passed dump "analyze"; 1 named it "analyze", and a request of
// version 1 is still read (its type read as "analyze") and answered in version 1.
// Nothing here throws: bad input becomes a wire_error.
#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace heapd::wire {

using json = nlohmann::ordered_json;

inline constexpr unsigned protocol_version = 2;
inline constexpr unsigned oldest_protocol_version = 1;  // the oldest this side still reads
inline constexpr std::size_t frame_header_bytes = 4;
inline constexpr std::uint32_t max_message_bytes = 16u << 20;
inline constexpr unsigned max_json_depth = 64;  // deeper nesting is refused before parsing
// Where heapd serves, and where clients and OOM hooks look, unless told otherwise.
inline constexpr const char* standard_socket_path = "/run/heapd/heapd.sock";

// Why a request failed, as both sides name it; unknown codes from a newer peer read as other.
enum class error_kind {
    bad_request,          // malformed message, missing or mistyped field
    unsupported_version,  // a protocol version this side does not speak
    too_large,            // a message over max_message_bytes
    unknown_type,         // a request type this daemon does not know
    not_found,            // no such job or dump
    permission_denied,    // the caller may not act on it
    bad_input,            // the file is not a heap dump it can read
    no_space,             // the store's file system has too little free space
    busy,                 // too many clients or jobs
    cancelled,            // the job was cancelled
    failed,               // the job failed for another reason
    internal,             // a bug or an operating system failure in the daemon
    other,                // a code this version does not know
};

// "bad_request", "not_found", ...
std::string_view error_kind_name(error_kind kind);
// The kind a code names; other for codes this version does not know.
error_kind error_kind_from_name(std::string_view name);

// An error as carried by an error reply; id is the request it answers when known.
struct wire_error {
    error_kind kind = error_kind::internal;
    std::string message;
    std::uint64_t id = 0;
};

template <class T>
using wire_result = std::expected<T, wire_error>;

inline std::unexpected<wire_error> wire_fail(error_kind kind, std::string message, std::uint64_t id = 0) {
    return std::unexpected(wire_error{kind, std::move(message), id});
}

// A client's request: "status", "jobs", "analyze", "report", "dumps", "rm", "cancel", "dump", "jvms",
// "diff", "path", "metrics", "sites".
struct request {
    std::uint64_t id = 0;
    std::string type;
    json args = json::object();
    unsigned version = protocol_version;  // the version it was sent in
};

// Progress of a job: its phase, and bytes of work done out of total.
struct progress_event {
    std::uint64_t job = 0;
    std::string phase;
    std::uint64_t done = 0;
    std::uint64_t total = 0;
};

// What a reply carries.
enum class reply_kind { result, error, progress };

// The daemon's answer to one request: one of result, error or progress by kind.
struct reply {
    std::uint64_t id = 0;
    reply_kind kind = reply_kind::result;
    json result = json::object();
    wire_error error;
    progress_event progress;
    unsigned version = protocol_version;  // the version it is sent in: the request's
};

reply make_result(std::uint64_t id, json result);
reply make_error(std::uint64_t id, error_kind kind, std::string message);
reply make_progress(std::uint64_t id, progress_event progress);

// The frame of a JSON payload (header and bytes); too_large when it exceeds max_bytes.
wire_result<std::string> encode_frame(const json& payload, std::uint32_t max_bytes = max_message_bytes);
wire_result<std::string> encode_request(const request& r, std::uint32_t max_bytes = max_message_bytes);
wire_result<std::string> encode_reply(const reply& r, std::uint32_t max_bytes = max_message_bytes);

// The payload of one frame (without its header) read back. Errors carry the id when it was read.
wire_result<request> decode_request(std::string_view payload);
wire_result<reply> decode_reply(std::string_view payload);

// The payload length a frame header declares; too_large above max_bytes.
wire_result<std::uint32_t> decode_frame_length(std::span<const std::byte, frame_header_bytes> header,
                                               std::uint32_t max_bytes = max_message_bytes);

// Splits a byte stream into frame payloads. After an oversized header it stays failed: the
// stream cannot be followed further and the connection has to end.
class frame_parser {
public:
    explicit frame_parser(std::uint32_t max_bytes = max_message_bytes) : max_bytes_(max_bytes) {}
    // Takes more bytes of the stream; fails (now and on every later call) on an oversized frame.
    wire_result<void> feed(std::span<const std::byte> bytes);
    wire_result<void> feed(std::string_view bytes) { return feed(std::as_bytes(std::span(bytes))); }
    // The next complete payload, in order; nullopt until one is complete.
    std::optional<std::string> next();
    // True when part of a frame has been received but not all of it.
    bool partial() const { return pos_ < buffer_.size(); }

private:
    std::uint32_t max_bytes_;
    std::string buffer_;
    std::size_t pos_ = 0;
    std::optional<wire_error> failed_;
};

// Typed access to request arguments: missing gives the fallback, a wrong type is bad_request.
wire_result<std::uint64_t> arg_uint(const json& args, std::string_view key, std::optional<std::uint64_t> fallback);
wire_result<std::string> arg_string(const json& args, std::string_view key, std::optional<std::string> fallback);
wire_result<bool> arg_bool(const json& args, std::string_view key, bool fallback);

// The deepest nesting of arrays and objects in a JSON text (strings skipped), without parsing it.
unsigned json_depth(std::string_view text);

}  // namespace heapd::wire
