#pragma once
// heapctl's side of the socket: connects to heapd, sends requests (with a file descriptor when
// asked, SCM_RIGHTS), and reads replies, progress events included.
#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <string>

#include "formats/wire/exit_codes.h"
#include "formats/wire/protocol.h"

namespace heapd::cli {

using namespace heapd::wire::exits;  // heapctl's exit statuses

// Why talking to the daemon failed, with the exit status it calls for.
struct client_error {
    exit_code code = failed;
    std::string message;
};

template <class T>
using client_result = std::expected<T, client_error>;

// The socket heapctl uses: --socket, else $HEAPD_SOCKET, else /run/heapd/heapd.sock.
std::string default_socket();

// One connection to heapd.
class daemon_client {
public:
    // Connects; a daemon that is not running gives no_daemon and how to start it.
    static client_result<daemon_client> connect(const std::string& socket_path);
    daemon_client(daemon_client&& o) noexcept;
    daemon_client& operator=(daemon_client&&) = delete;
    ~daemon_client();

    // Called for each progress event while waiting for the result.
    using progress_fn = std::function<void(const wire::progress_event&)>;
    // Called about every 200 ms while waiting (to redraw a progress bar).
    using tick_fn = std::function<void()>;

    // Sends a request, passing fd along when >= 0, and waits for its result.
    client_result<wire::json> call(const std::string& type, wire::json args, int fd = -1,
                                   const progress_fn& on_progress = {}, const tick_fn& on_tick = {});

private:
    daemon_client(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
    client_result<void> send_frame(const std::string& frame, int fd);
    client_result<wire::reply> read_reply(const tick_fn& on_tick);

    int fd_ = -1;
    std::string path_;
    std::uint64_t next_id_ = 1;
    wire::frame_parser parser_;
};

}  // namespace heapd::cli
