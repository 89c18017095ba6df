#include "attach/internal/listener_protocol.h"
#include "base/unix_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace heapd::attach {
namespace {

// `getversion options` in v1: the probe JDK 24+ answers with "<version>[ <options>]".
constexpr char probe_request[] = "1\0getversion\0options\0\0\0";
constexpr std::size_t probe_size = sizeof(probe_request) - 1;
constexpr std::int64_t poll_slice_ms = 200;

void sleep_ms(std::int64_t ms) {
    timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1000000)};
    while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

// Connects a non-blocking unix stream socket to path by deadline; -1 and failure set otherwise.
int connect_listener(const char* path, std::int64_t deadline, listener_failure& failure) {
    sockaddr_un addr{};
    if (!unix_address(path, addr)) {
        set_failure(failure, error_code::io, "socket path %s is too long for a unix socket", path);
        return -1;
    }
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        set_failure(failure, error_code::io, "socket: %s", std::strerror(errno));
        return -1;
    }
    for (;;) {
        if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) return fd;
        int e = errno;
        if (e == EINTR) continue;
        if (e == EAGAIN && monotonic_ms() < deadline) {  // the listener's backlog is full
            sleep_ms(10);
            continue;
        }
        ::close(fd);
        if (e == EAGAIN)
            set_failure(failure, error_code::not_responding, "the attach listener at %s accepts no connection", path);
        else if (e == ECONNREFUSED) {
            set_failure(failure, error_code::not_responding,
                        "nothing listens on %s (the socket of an attach listener that stopped)", path);
            failure.refused = true;
        } else if (e == EACCES || e == EPERM)
            set_failure(failure, error_code::permission_denied, "connect %s: %s", path, std::strerror(e));
        else if (e == ENOENT)
            set_failure(failure, error_code::not_responding, "the attach socket %s vanished", path);
        else
            set_failure(failure, error_code::io, "connect %s: %s", path, std::strerror(e));
        return -1;
    }
}

// Sends all bytes by deadline. A peer that closed early (it refused the request) is not a failure
// here: its answer is still to be read.
bool send_all(int fd, std::string_view bytes, std::int64_t deadline, listener_failure& failure) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
        ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n > 0) {
            sent += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) return true;
        if (n < 0 && errno == EAGAIN) {
            std::int64_t left = deadline - monotonic_ms();
            if (left <= 0) {
                set_failure(failure, error_code::not_responding, "the JVM does not read its attach request");
                return false;
            }
            pollfd p{fd, POLLOUT, 0};
            ::poll(&p, 1, static_cast<int>(std::min(left, poll_slice_ms)));
            continue;
        }
        set_failure(failure, error_code::io, "send: %s", std::strerror(errno));
        return false;
    }
    return true;
}

// Size of the watched file, -1 when absent.
long long watched_size(const progress_watch& watch) {
    if (watch.dir_fd < 0 || watch.name == nullptr) return -1;
    struct stat st {};
    return ::fstatat(watch.dir_fd, watch.name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? static_cast<long long>(st.st_size) : -1;
}

// Reads "<status>\n<output>" until the peer closes. It fails with not_responding idle_ms after it
// began or after the watched file last grew (the reply's own bytes do not count: a listener that
// trickles its answer gains nothing), and at hard_deadline (when positive) whatever happens.
bool read_reply(int fd, int protocol, std::int64_t idle_ms, std::int64_t hard_deadline, const progress_watch& watch,
                const reply_sink& sink, listener_failure& failure) {
    char buffer[16384];
    char line[32];
    std::size_t line_length = 0;
    bool have_status = false;
    long long last_size = watched_size(watch);
    std::int64_t last_activity = monotonic_ms();
    for (;;) {
        std::int64_t now = monotonic_ms();
        std::int64_t idle_end = last_activity + idle_ms;
        if (hard_deadline > 0) idle_end = std::min(idle_end, hard_deadline);
        if (now >= idle_end) {
            set_failure(failure, error_code::not_responding,
                        have_status ? "the JVM did not finish its reply within %lld ms"
                                    : "the JVM accepted the request but did not answer within %lld ms",
                        static_cast<long long>(now - last_activity));
            return false;
        }
        pollfd p{fd, POLLIN, 0};
        int ready = ::poll(&p, 1, static_cast<int>(std::min(idle_end - now, poll_slice_ms)));
        if (ready == 0) {
            long long size = watched_size(watch);
            if (size != last_size) {
                last_size = size;
                last_activity = monotonic_ms();
                if (sink.progress && !sink.progress(sink.context)) return false;
            }
            continue;
        }
        if (ready < 0 && errno == EINTR) continue;
        ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n < 0 && errno != ECONNRESET) {
            set_failure(failure, error_code::io, "read: %s", std::strerror(errno));
            return false;
        }
        if (n <= 0) break;  // closed: the reply is complete
        std::size_t used = 0;
        while (!have_status && used < static_cast<std::size_t>(n)) {
            char c = buffer[used++];
            if (c == '\n') {
                line[line_length] = '\0';
                char* end = nullptr;
                long status = std::strtol(line, &end, 10);
                if (line_length == 0 || end == nullptr || *end != '\0') {
                    set_failure(failure, error_code::protocol, "the JVM answered with a malformed status line");
                    return false;
                }
                have_status = true;
                if (status == status_bad_version) {
                    set_failure(failure, error_code::protocol, "the JVM refused attach protocol v%d", protocol);
                    return false;
                }
                if (sink.status && !sink.status(sink.context, static_cast<int>(status), protocol)) return false;
            } else if (line_length + 1 < sizeof line) {
                line[line_length++] = c;
            } else {
                set_failure(failure, error_code::protocol, "the JVM answered with a malformed status line");
                return false;
            }
        }
        if (used < static_cast<std::size_t>(n) && sink.output &&
            !sink.output(sink.context, buffer + used, static_cast<std::size_t>(n) - used))
            return false;
    }
    if (!have_status) {
        set_failure(failure, error_code::protocol, "the attach listener closed the connection without a status");
        return false;
    }
    return true;
}

// What `getversion options` said.
struct version_probe {
    int version = 1;
    char options[96] = {};
    std::size_t length = 0;
    int status = 0;
};

bool probe_status(void* context, int status, int) {
    auto* probe = static_cast<version_probe*>(context);
    probe->status = status;
    return true;
}

bool probe_output(void* context, const char* data, std::size_t size) {
    auto* probe = static_cast<version_probe*>(context);
    std::size_t room = sizeof probe->options - 1 - probe->length;
    std::memcpy(probe->options + probe->length, data, std::min(room, size));
    probe->length += std::min(room, size);
    probe->options[probe->length] = '\0';
    return true;
}

// Whether the probe's answer ("2 streaming", say) lists option among the words after the version.
bool lists_option(const char* answer, std::string_view option) {
    if (option.empty()) return false;
    const char* p = answer;
    while (*p >= '0' && *p <= '9') ++p;
    for (;;) {
        while (*p == ' ' || *p == ',' || *p == '\n') ++p;
        if (*p == '\0') return false;
        const char* start = p;
        while (*p != '\0' && *p != ' ' && *p != ',' && *p != '\n') ++p;
        if (std::string_view(start, static_cast<std::size_t>(p - start)) == option) return true;
    }
}

// One request and its reply over a fresh connection.
bool exchange(const char* path, std::string_view request, int protocol, std::int64_t connect_deadline,
              std::int64_t idle_ms, std::int64_t hard_deadline, const progress_watch& watch, const reply_sink& sink,
              listener_failure& failure) {
    int fd = connect_listener(path, connect_deadline, failure);
    if (fd < 0) return false;
    bool ok = send_all(fd, request, std::max(connect_deadline, monotonic_ms() + idle_ms), failure) &&
              read_reply(fd, protocol, idle_ms, hard_deadline, watch, sink, failure);
    ::close(fd);
    return ok;
}

}  // namespace

result<void> check_request(const attach_request& request) {
    if (request.command.empty()) return fail(error_code::protocol, "no attach operation given");
    auto has_nul = [](const std::string& s) { return s.find('\0') != std::string::npos; };
    if (has_nul(request.command) || std::ranges::any_of(request.args, has_nul))
        return fail(error_code::protocol, "attach operations and arguments cannot contain NUL characters");
    return {};
}

std::string encode_v1(const attach_request& request) {
    if (request.command.size() > v1_name_max || request.args.size() > v1_arg_count) return {};
    std::string out("1\0", 2);
    out.append(request.command).push_back('\0');
    for (std::size_t i = 0; i < v1_arg_count; ++i) {
        if (i < request.args.size()) {
            if (request.args[i].size() > v1_arg_max) return {};
            out.append(request.args[i]);
        }
        out.push_back('\0');
    }
    return out;
}

std::string encode_v2(const attach_request& request, std::string_view options) {
    std::string data = request.command;
    if (!options.empty()) data.append(" ").append(options);
    data.push_back('\0');
    for (const auto& arg : request.args) data.append(arg).push_back('\0');
    std::string out("2\0", 2);
    out.append(std::to_string(data.size())).push_back('\0');
    return out + data;
}

prepared_request prepare(const attach_request& request, const attach_options& options) {
    prepared_request out;
    out.v1 = encode_v1(request);
    out.v2 = encode_v2(request, "");
    if (options.streaming) out.v2_options = encode_v2(request, *options.streaming ? "streaming=1" : "streaming=0");
    out.protocol = options.protocol;
    return out;
}

std::int64_t monotonic_ms() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

std::int64_t hard_deadline_of(const attach_options& options, std::int64_t start) {
    const auto limit = options.limit.count() > 0 ? options.limit : options.timeout;
    return start + std::max<std::int64_t>(limit.count(), 1);
}

void set_failure(listener_failure& failure, error_code code, const char* format, ...) {
    failure.code = code;
    failure.refused = false;
    va_list args;
    va_start(args, format);
    std::vsnprintf(failure.message, sizeof failure.message, format, args);
    va_end(args);
}

bool converse(const char* socket_path, const listener_plan& plan, std::int64_t attach_deadline, std::int64_t idle_ms,
              std::int64_t hard_deadline, const progress_watch& watch, const reply_sink& sink,
              listener_failure& failure) {
    int version = 1;
    bool option_offered = false;
    if (plan.protocol != protocol_choice::v1) {
        version_probe probe;
        reply_sink probe_sink{&probe, probe_status, probe_output, nullptr};
        std::int64_t left = std::max<std::int64_t>(attach_deadline - monotonic_ms(), 1);
        if (!exchange(socket_path, std::string_view(probe_request, probe_size), 1, attach_deadline, left,
                      attach_deadline, progress_watch{}, probe_sink, failure))
            return false;
        // Old JVMs answer "Operation getversion not recognized!" with a failure status.
        if (probe.status == 0) {
            version = std::atoi(probe.options);
            option_offered = lists_option(probe.options, plan.option_name);
        }
        if (sink.progress && !sink.progress(sink.context)) return false;
    }
    if (plan.protocol == protocol_choice::v2 && version < 2) {
        set_failure(failure, error_code::protocol, "the JVM does not offer attach protocol v2 (it speaks v%d)",
                    version);
        return false;
    }
    std::string_view request = plan.v1;
    int protocol = 1;
    if (version >= 2 && plan.protocol != protocol_choice::v1) {
        request = option_offered && !plan.v2_options.empty() ? plan.v2_options : plan.v2;
        protocol = 2;
    }
    if (request.empty()) {
        set_failure(failure, error_code::protocol,
                    "the request needs attach protocol v2 (more than %zu arguments, or one longer than %zu bytes, or "
                    "a name longer than %zu), which this JVM does not offer",
                    v1_arg_count, v1_arg_max, v1_name_max);
        return false;
    }
    listener_failure request_failure;
    if (!exchange(socket_path, request, protocol, std::min(monotonic_ms() + idle_ms, hard_deadline), idle_ms,
                  hard_deadline, watch, sink, request_failure)) {
        failure = request_failure;
        return false;
    }
    return true;
}

}  // namespace heapd::attach
