#include "agent/daemon_request.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "agent/json_text.h"

namespace heapd::agent {
namespace {

// text as a JSON string of printable ASCII: any other byte made '?' first (the daemon shows the
// line as the JVM's words anyway), then escaped as the agent escapes every string.
std::string json_string(std::string_view text) {
    std::string printable(text);
    for (char& c : printable)
        if (c < 0x20 || c >= 0x7f) c = '?';
    std::string out;
    append_string(out, printable);
    return out;
}

// The string value of "key":"..." in a payload heapd wrote (compact JSON, no spaces); "" when absent.
std::string_view string_field(std::string_view payload, std::string_view key) {
    const std::string pattern = "\"" + std::string(key) + "\":\"";
    const std::size_t at = payload.find(pattern);
    if (at == std::string_view::npos) return {};
    const std::size_t start = at + pattern.size();
    const std::size_t end = payload.find('"', start);
    return end == std::string_view::npos ? std::string_view{} : payload.substr(start, end - start);
}

using clock = std::chrono::steady_clock;

// Waits until fd is ready for events or the deadline passes; false on timeout or error.
bool ready(int fd, short events, clock::time_point deadline) {
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
        if (left <= 0) return false;
        pollfd p{fd, events, 0};
        const int n = ::poll(&p, 1, static_cast<int>(left));
        if (n > 0) return true;
        if (n < 0 && errno != EINTR) return false;
    }
}

// Reads exactly size bytes by the deadline.
bool read_exactly(int fd, char* out, std::size_t size, clock::time_point deadline) {
    for (std::size_t got = 0; got < size;) {
        if (!ready(fd, POLLIN, deadline)) return false;
        const ssize_t n = ::read(fd, out + got, size - got);
        if (n == 0) return false;
        if (n < 0 && errno != EINTR && errno != EAGAIN) return false;
        if (n > 0) got += static_cast<std::size_t>(n);
    }
    return true;
}

}  // namespace

std::string dump_request_frame(long pid, std::uint64_t start_time, std::string_view oom_kind,
                               std::string_view oom_error) {
    const std::string payload = "{\"v\":2,\"id\":1,\"type\":\"dump\",\"args\":{\"pid\":" + std::to_string(pid) +
                                ",\"start_time\":" + std::to_string(start_time) +
                                ",\"trigger\":\"oom\",\"oom_kind\":" + json_string(oom_kind) +
                                ",\"oom_error\":" + json_string(oom_error) + ",\"live\":false,\"wait\":true}}";
    const auto n = static_cast<std::uint32_t>(payload.size());
    std::string frame = {static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                         static_cast<char>(n)};
    return frame + payload;
}

reply_meaning read_reply(std::string_view payload) {
    const std::string_view type = string_field(payload, "type");
    if (type == "result") return reply_meaning::written;
    if (type != "progress") return reply_meaning::failed;  // an error, or nothing heapd would send
    // The dump job's phases before the heap is in the store (daemon/jobs/dump_job.cpp); any other
    // is its analysis, of a dump already written.
    const std::string_view phase = string_field(payload, "phase");
    if (phase == "prepare" || phase == "waiting for the JVM" || phase == "dump") return reply_meaning::waiting;
    return reply_meaning::written;
}

std::string ask_for_dump(const std::string& socket_path, const std::string& frame, int wait_s) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (socket_path.empty() || socket_path.size() >= sizeof address.sun_path) return "the socket's path is too long";
    std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return std::string("socket: ") + std::strerror(errno);
    const auto deadline = clock::now() + std::chrono::seconds(wait_s);
    std::string outcome;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
        outcome = "cannot reach heapd at " + socket_path + ": " + std::strerror(errno);
    } else {
        for (std::size_t sent = 0; sent < frame.size() && outcome.empty();) {
            const ssize_t n = ::send(fd, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
            if (n > 0)
                sent += static_cast<std::size_t>(n);
            else if (n < 0 && errno != EINTR)
                outcome = std::string("cannot send to heapd: ") + std::strerror(errno);
        }
        // Replies until one says the heap is written; each at most 1 MiB (a progress event is small;
        // a larger one is the result, which is enough to know).
        while (outcome.empty()) {
            unsigned char header[4];
            if (!read_exactly(fd, reinterpret_cast<char*>(header), sizeof header, deadline)) {
                outcome = clock::now() >= deadline ? "heapd did not dump in time" : "heapd closed the connection";
                break;
            }
            const std::uint32_t size = (std::uint32_t{header[0]} << 24) | (std::uint32_t{header[1]} << 16) |
                                       (std::uint32_t{header[2]} << 8) | header[3];
            std::string payload(std::min<std::uint32_t>(size, 1u << 20), '\0');
            if (!read_exactly(fd, payload.data(), payload.size(), deadline)) {
                outcome = "heapd's reply was cut short";
                break;
            }
            const reply_meaning m = read_reply(payload);
            if (m == reply_meaning::written) break;
            if (m == reply_meaning::failed) outcome = "heapd refused or failed the dump";
            if (size > payload.size()) outcome = "heapd's reply is larger than the agent reads";
        }
    }
    ::close(fd);
    return outcome;
}

}  // namespace heapd::agent
