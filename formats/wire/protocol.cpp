#include "formats/wire/protocol.h"

#include <array>
#include <utility>

namespace heapd::wire {
namespace {

constexpr std::array<std::pair<error_kind, std::string_view>, 12> kind_names{{
    {error_kind::bad_request, "bad_request"},
    {error_kind::unsupported_version, "unsupported_version"},
    {error_kind::too_large, "too_large"},
    {error_kind::unknown_type, "unknown_type"},
    {error_kind::not_found, "not_found"},
    {error_kind::permission_denied, "permission_denied"},
    {error_kind::bad_input, "bad_input"},
    {error_kind::no_space, "no_space"},
    {error_kind::busy, "busy"},
    {error_kind::cancelled, "cancelled"},
    {error_kind::failed, "failed"},
    {error_kind::internal, "internal"},
}};

constexpr std::size_t max_type_length = 64;

std::string str(std::string_view s) { return std::string(s); }

// An unsigned integer field (JSON integers >= 0 only; no floats, no strings).
std::optional<std::uint64_t> as_uint(const json& j) {
    if (j.is_number_unsigned()) return j.get<std::uint64_t>();
    if (j.is_number_integer() && j.get<std::int64_t>() >= 0) return static_cast<std::uint64_t>(j.get<std::int64_t>());
    return std::nullopt;
}

// The payload parsed as a JSON object with a readable version, id and type; the id read so far
// goes into the error so the reply can name the request.
wire_result<json> parse_envelope(std::string_view payload, unsigned& version_out, std::uint64_t& id,
                                 std::string& type) {
    if (payload.empty()) return wire_fail(error_kind::bad_request, "empty message");
    if (json_depth(payload) > max_json_depth)
        return wire_fail(error_kind::bad_request, "message nested deeper than " + std::to_string(max_json_depth));
    json j;
    try {
        j = json::parse(payload.begin(), payload.end(), nullptr, false);
    } catch (...) {
        return wire_fail(error_kind::bad_request, "message is not valid JSON");
    }
    if (j.is_discarded()) return wire_fail(error_kind::bad_request, "message is not valid JSON");
    if (!j.is_object()) return wire_fail(error_kind::bad_request, "message is not a JSON object");
    if (auto it = j.find("id"); it != j.end()) {
        auto v = as_uint(*it);
        if (!v) return wire_fail(error_kind::bad_request, "\"id\" is not an unsigned integer");
        id = *v;
    } else {
        return wire_fail(error_kind::bad_request, "message has no \"id\"");
    }
    auto v = j.find("v");
    if (v == j.end()) return wire_fail(error_kind::bad_request, "message has no protocol version \"v\"", id);
    auto version = as_uint(*v);
    if (!version) return wire_fail(error_kind::bad_request, "\"v\" is not an unsigned integer", id);
    if (*version < oldest_protocol_version || *version > protocol_version)
        return wire_fail(error_kind::unsupported_version,
                         "protocol version " + std::to_string(*version) + " is not supported (this side speaks " +
                             std::to_string(oldest_protocol_version) + " to " + std::to_string(protocol_version) + ")",
                         id);
    version_out = static_cast<unsigned>(*version);
    auto t = j.find("type");
    if (t == j.end() || !t->is_string())
        return wire_fail(error_kind::bad_request, "\"type\" is missing or not a string", id);
    type = t->get<std::string>();
    if (type.empty() || type.size() > max_type_length)
        return wire_fail(error_kind::bad_request, "\"type\" is empty or too long", id);
    return j;
}

wire_result<progress_event> read_progress(const json& p) {
    if (!p.is_object()) return wire_fail(error_kind::bad_request, "\"progress\" is not an object");
    progress_event e;
    auto field = [&](const char* key) -> std::optional<std::uint64_t> {
        auto it = p.find(key);
        return it == p.end() ? std::nullopt : as_uint(*it);
    };
    auto job = field("job"), done = field("done"), total = field("total");
    auto phase = p.find("phase");
    if (!job || !done || !total || phase == p.end() || !phase->is_string())
        return wire_fail(error_kind::bad_request, "\"progress\" needs job, phase, done and total");
    e.job = *job;
    e.phase = phase->get<std::string>();
    e.done = *done;
    e.total = *total;
    return e;
}

}  // namespace

std::string_view error_kind_name(error_kind kind) {
    for (const auto& [k, name] : kind_names)
        if (k == kind) return name;
    return "other";
}

error_kind error_kind_from_name(std::string_view name) {
    for (const auto& [k, n] : kind_names)
        if (n == name) return k;
    return error_kind::other;
}

reply make_result(std::uint64_t id, json result) {
    reply r;
    r.id = id;
    r.kind = reply_kind::result;
    r.result = std::move(result);
    return r;
}

reply make_error(std::uint64_t id, error_kind kind, std::string message) {
    reply r;
    r.id = id;
    r.kind = reply_kind::error;
    r.error = {kind, std::move(message), id};
    return r;
}

reply make_progress(std::uint64_t id, progress_event progress) {
    reply r;
    r.id = id;
    r.kind = reply_kind::progress;
    r.progress = std::move(progress);
    return r;
}

wire_result<std::string> encode_frame(const json& payload, std::uint32_t max_bytes) {
    std::string text;
    try {
        // Invalid UTF-8 (a file name in another encoding) is replaced rather than refused.
        text = payload.dump(-1, ' ', false, json::error_handler_t::replace);
    } catch (...) {
        return wire_fail(error_kind::internal, "message cannot be encoded");
    }
    if (text.size() > max_bytes)
        return wire_fail(error_kind::too_large, "message of " + std::to_string(text.size()) +
                                                    " bytes exceeds the limit of " + std::to_string(max_bytes) +
                                                    " bytes");
    const auto n = static_cast<std::uint32_t>(text.size());
    std::string frame;
    frame.reserve(frame_header_bytes + text.size());
    for (int shift = 24; shift >= 0; shift -= 8) frame.push_back(static_cast<char>((n >> shift) & 0xff));
    frame += text;
    return frame;
}

wire_result<std::string> encode_request(const request& r, std::uint32_t max_bytes) {
    json j = {{"v", r.version}, {"id", r.id}, {"type", r.type}};
    j["args"] = r.args.is_object() ? r.args : json::object();
    return encode_frame(j, max_bytes);
}

wire_result<std::string> encode_reply(const reply& r, std::uint32_t max_bytes) {
    json j = {{"v", r.version}, {"id", r.id}};
    switch (r.kind) {
    case reply_kind::result:
        j["type"] = "result";
        j["result"] = r.result.is_object() ? r.result : json::object();
        break;
    case reply_kind::error:
        j["type"] = "error";
        j["error"] = {{"code", str(error_kind_name(r.error.kind))}, {"message", r.error.message}};
        break;
    case reply_kind::progress:
        j["type"] = "progress";
        j["progress"] = {{"job", r.progress.job},
                         {"phase", r.progress.phase},
                         {"done", r.progress.done},
                         {"total", r.progress.total}};
        break;
    }
    return encode_frame(j, max_bytes);
}

wire_result<request> decode_request(std::string_view payload) {
    request r;
    auto j = parse_envelope(payload, r.version, r.id, r.type);
    if (!j) return std::unexpected(j.error());
    if (r.version == 1 && r.type == "analyse") r.type = "analyze";  // version 1's name
    if (auto a = j->find("args"); a != j->end()) {
        if (!a->is_object()) return wire_fail(error_kind::bad_request, "\"args\" is not an object", r.id);
        r.args = std::move(*a);
    }
    return r;
}

wire_result<reply> decode_reply(std::string_view payload) {
    reply r;
    std::string type;
    auto j = parse_envelope(payload, r.version, r.id, type);
    if (!j) return std::unexpected(j.error());
    auto fail_here = [&](std::string message) { return wire_fail(error_kind::bad_request, std::move(message), r.id); };
    if (type == "result") {
        auto it = j->find("result");
        if (it == j->end() || !it->is_object()) return fail_here("result reply without a \"result\" object");
        r.kind = reply_kind::result;
        r.result = std::move(*it);
    } else if (type == "error") {
        auto it = j->find("error");
        if (it == j->end() || !it->is_object()) return fail_here("error reply without an \"error\" object");
        auto code = it->find("code"), message = it->find("message");
        if (code == it->end() || !code->is_string() || message == it->end() || !message->is_string())
            return fail_here("\"error\" needs a code and a message, both strings");
        r.kind = reply_kind::error;
        r.error = {error_kind_from_name(code->get<std::string>()), message->get<std::string>(), r.id};
    } else if (type == "progress") {
        auto it = j->find("progress");
        if (it == j->end()) return fail_here("progress reply without a \"progress\" object");
        auto p = read_progress(*it);
        if (!p) return fail_here(p.error().message);
        r.kind = reply_kind::progress;
        r.progress = std::move(*p);
    } else {
        return wire_fail(error_kind::unknown_type, "unknown reply type \"" + type + "\"", r.id);
    }
    return r;
}

wire_result<std::uint32_t> decode_frame_length(std::span<const std::byte, frame_header_bytes> header,
                                               std::uint32_t max_bytes) {
    std::uint32_t n = 0;
    for (std::byte b : header) n = (n << 8) | std::to_integer<std::uint32_t>(b);
    if (n > max_bytes)
        return wire_fail(error_kind::too_large, "message of " + std::to_string(n) + " bytes exceeds the limit of " +
                                                    std::to_string(max_bytes) + " bytes");
    return n;
}

wire_result<void> frame_parser::feed(std::span<const std::byte> bytes) {
    if (failed_) return std::unexpected(*failed_);
    // Drop what was consumed before growing the buffer.
    if (pos_ > 0 && (pos_ == buffer_.size() || pos_ > buffer_.size() / 2)) {
        buffer_.erase(0, pos_);
        pos_ = 0;
    }
    buffer_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    // Check every complete header now, so an oversized frame fails at once, not after its bytes.
    std::size_t at = pos_;
    while (at + frame_header_bytes <= buffer_.size()) {
        auto header = std::as_bytes(std::span(buffer_).subspan(at, frame_header_bytes));
        auto n = decode_frame_length(std::span<const std::byte, frame_header_bytes>(header.data(), frame_header_bytes),
                                     max_bytes_);
        if (!n) {
            failed_ = n.error();
            return std::unexpected(*failed_);
        }
        at += frame_header_bytes + *n;
    }
    return {};
}

std::optional<std::string> frame_parser::next() {
    if (failed_ || buffer_.size() - pos_ < frame_header_bytes) return std::nullopt;
    std::uint32_t n = 0;
    for (std::size_t i = 0; i < frame_header_bytes; ++i) n = (n << 8) | static_cast<unsigned char>(buffer_[pos_ + i]);
    if (buffer_.size() - pos_ - frame_header_bytes < n) return std::nullopt;
    std::string payload = buffer_.substr(pos_ + frame_header_bytes, n);
    pos_ += frame_header_bytes + n;
    return payload;
}

wire_result<std::uint64_t> arg_uint(const json& args, std::string_view key, std::optional<std::uint64_t> fallback) {
    auto it = args.find(std::string(key));
    if (it == args.end() || it->is_null()) {
        if (fallback) return *fallback;
        return wire_fail(error_kind::bad_request, "argument \"" + str(key) + "\" is missing");
    }
    if (auto v = as_uint(*it)) return *v;
    return wire_fail(error_kind::bad_request, "argument \"" + str(key) + "\" is not an unsigned integer");
}

wire_result<std::string> arg_string(const json& args, std::string_view key, std::optional<std::string> fallback) {
    auto it = args.find(std::string(key));
    if (it == args.end() || it->is_null()) {
        if (fallback) return *fallback;
        return wire_fail(error_kind::bad_request, "argument \"" + str(key) + "\" is missing");
    }
    if (it->is_string()) return it->get<std::string>();
    return wire_fail(error_kind::bad_request, "argument \"" + str(key) + "\" is not a string");
}

wire_result<bool> arg_bool(const json& args, std::string_view key, bool fallback) {
    auto it = args.find(std::string(key));
    if (it == args.end() || it->is_null()) return fallback;
    if (it->is_boolean()) return it->get<bool>();
    return wire_fail(error_kind::bad_request, "argument \"" + str(key) + "\" is not a boolean");
}

unsigned json_depth(std::string_view text) {
    unsigned depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (char c : text) {
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"')
            in_string = true;
        else if (c == '[' || c == '{')
            deepest = std::max(deepest, ++depth);
        else if ((c == ']' || c == '}') && depth > 0)
            --depth;
    }
    return deepest;
}

}  // namespace heapd::wire
