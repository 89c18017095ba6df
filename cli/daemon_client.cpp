#include "cli/daemon_client.h"
#include "base/unix_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace heapd::cli {
namespace {

constexpr const char* standard_socket = wire::standard_socket_path;

client_error lost(const std::string& path, const std::string& why) {
    return {no_daemon, "the connection to heapd on " + path + " was lost (" + why +
                           "); did the daemon stop? See its log, and `heapctl status`"};
}

}  // namespace

std::string default_socket() {
    if (const char* s = std::getenv("HEAPD_SOCKET"); s != nullptr && *s != '\0') return s;
    return standard_socket;
}

client_result<daemon_client> daemon_client::connect(const std::string& path) {
    sockaddr_un addr{};
    if (!unix_address(path, addr))
        return std::unexpected(client_error{usage, "socket path \"" + path + "\" is empty or too long"});
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return std::unexpected(client_error{failed, std::string("cannot make a socket: ") + std::strerror(errno)});
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        int err = errno;
        ::close(fd);
        std::string start = "heapd serve" + (path == standard_socket ? std::string() : " --socket " + path);
        if (err == ENOENT || err == ECONNREFUSED)
            return std::unexpected(client_error{
                no_daemon, "heapd is not running: nothing listens on " + path + " (" + std::strerror(err) +
                               ").\nStart the daemon as root with:  " + start +
                               "\n(or point heapctl at another socket with --socket PATH or HEAPD_SOCKET)"});
        return std::unexpected(
            client_error{no_daemon, "cannot connect to heapd on " + path + ": " + std::strerror(err)});
    }
    return daemon_client(fd, path);
}

daemon_client::daemon_client(daemon_client&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)), next_id_(o.next_id_), parser_(std::move(o.parser_)) {}

daemon_client::~daemon_client() {
    if (fd_ >= 0) ::close(fd_);
}

client_result<void> daemon_client::send_frame(const std::string& frame, int fd) {
    std::size_t sent = 0;
    while (sent < frame.size()) {
        // The descriptor goes with the frame's first byte.
        const ssize_t n = send_with_fd(fd_, frame.data() + sent, frame.size() - sent, sent == 0 ? fd : -1);
        if (n <= 0) return std::unexpected(lost(path_, std::strerror(errno)));
        sent += static_cast<std::size_t>(n);
    }
    return {};
}

client_result<wire::reply> daemon_client::read_reply(const tick_fn& on_tick) {
    for (;;) {
        if (auto payload = parser_.next()) {
            auto reply = wire::decode_reply(*payload);
            if (!reply)
                return std::unexpected(
                    client_error{protocol_mismatch, "heapd's reply cannot be read: " + reply.error().message +
                                                        " (do heapctl and heapd come from the same version?)"});
            return *reply;
        }
        pollfd p{fd_, POLLIN, 0};
        int ready = ::poll(&p, 1, 200);
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) {
            if (on_tick) on_tick();
            continue;
        }
        char buf[65536];
        ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return std::unexpected(lost(path_, n == 0 ? "closed by heapd" : std::strerror(errno)));
        if (auto fed = parser_.feed(std::string_view(buf, static_cast<std::size_t>(n))); !fed)
            return std::unexpected(
                client_error{protocol_mismatch, "heapd's reply cannot be read: " + fed.error().message});
    }
}

client_result<wire::json> daemon_client::call(const std::string& type, wire::json args, int fd,
                                              const progress_fn& on_progress, const tick_fn& on_tick) {
    const std::uint64_t id = next_id_++;
    auto frame = wire::encode_request({id, type, std::move(args)});
    if (!frame) return std::unexpected(client_error{usage, frame.error().message});
    if (auto sent = send_frame(*frame, fd); !sent) {
        // A daemon that refused the connection (too many clients) said why before closing it.
        if (auto refusal = read_reply(nullptr); refusal && refusal->kind == wire::reply_kind::error)
            return std::unexpected(client_error{exit_for(refusal->error.kind), refusal->error.message});
        return std::unexpected(sent.error());
    }
    for (;;) {
        auto reply = read_reply(on_tick);
        if (!reply) return std::unexpected(reply.error());
        if (reply->id != id && reply->id != 0) continue;  // not ours (cannot happen with one request at a time)
        switch (reply->kind) {
        case wire::reply_kind::progress:
            if (on_progress) on_progress(reply->progress);
            continue;
        case wire::reply_kind::error:
            return std::unexpected(client_error{exit_for(reply->error.kind), reply->error.message});
        case wire::reply_kind::result: return std::move(reply->result);
        }
    }
}

}  // namespace heapd::cli
