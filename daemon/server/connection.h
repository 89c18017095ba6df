#pragma once
// One client connection: reads frames (and descriptors passed with SCM_RIGHTS) from a Unix stream
// socket, hands each request to the request handler, and writes replies in order.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/unique_fd.h"
#include "daemon/server/peer.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {

class connection_manager;
class request_handler;

// A connected client; lives as long as its socket is open or a handler holds it.
class connection : public std::enable_shared_from_this<connection> {
public:
    using socket_type = boost::asio::local::stream_protocol::socket;

    connection(socket_type socket, connection_manager& manager, request_handler& handler, peer_credentials peer);
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    // Starts reading; call once, after the manager holds it. A connection with no request
    // outstanding that neither sends nor reads for idle_timeout is closed (told why), and so is one
    // whose replies the client has not read for that long.
    void start(std::chrono::milliseconds idle_timeout);
    // Closes the socket; handlers still holding it find it closed and send nothing.
    void stop();
    bool open() const { return !stopped_; }

    // Queues a reply; from another thread, the io_context's thread queues it. A reply too large for
    // one message becomes an error.
    void send(const wire::reply& reply);
    // Queues a reply, then closes once it is written (after errors the stream cannot recover from).
    void send_and_close(const wire::reply& reply);

    const peer_credentials& peer() const { return peer_; }
    // The oldest descriptor the client passed and no request has taken yet.
    std::optional<unique_fd> take_fd();

private:
    void wait_readable();
    void on_readable();
    void handle_next();
    void write_next();
    void watch_stall();
    void watch_idle();

    socket_type socket_;
    connection_manager& manager_;
    request_handler& handler_;
    peer_credentials peer_;
    wire::frame_parser parser_;
    std::deque<std::string> out_;
    std::size_t out_bytes_ = 0;
    std::deque<unique_fd> fds_;
    boost::asio::steady_timer stall_timer_;
    boost::asio::steady_timer idle_timer_;
    std::chrono::milliseconds idle_timeout_{0};
    std::map<std::uint64_t, unsigned> outstanding_;  // request ids without their final reply yet
    unsigned version_ = wire::protocol_version;      // the client's: of its latest request read
    bool active_ = false;                            // something read or written since the idle timer was set
    bool writing_ = false;
    bool close_after_write_ = false;
    bool stopped_ = false;
};

using connection_ptr = std::shared_ptr<connection>;

}  // namespace heapd::daemon
