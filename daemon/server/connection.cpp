#include "daemon/server/connection.h"

#include <sys/socket.h>

#include <cstring>
#include <span>
#include <vector>

#include <cerrno>
#include <chrono>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "base/unix_socket.h"
#include "daemon/server/connection_manager.h"
#include "daemon/server/handlers/request_handler.h"

namespace heapd::daemon {
namespace {

constexpr std::size_t read_chunk = 64 * 1024;
constexpr std::size_t max_pending_fds = 8;                // descriptors received and not yet used
constexpr std::size_t max_out_bytes = 64u << 20;          // replies queued for a client that does not read
constexpr auto stall_timeout = std::chrono::seconds(30);  // to finish a frame once begun

}  // namespace

connection::connection(socket_type socket, connection_manager& manager, request_handler& handler, peer_credentials peer)
    : socket_(std::move(socket)),
      manager_(manager),
      handler_(handler),
      peer_(std::move(peer)),
      stall_timer_(socket_.get_executor()),
      idle_timer_(socket_.get_executor()) {}

void connection::start(std::chrono::milliseconds idle_timeout) {
    boost::system::error_code ec;
    socket_.non_blocking(true, ec);
    idle_timeout_ = idle_timeout;
    watch_idle();
    wait_readable();
}

void connection::watch_idle() {
    if (stopped_ || idle_timeout_.count() <= 0) return;
    active_ = false;
    idle_timer_.expires_after(idle_timeout_);
    idle_timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
        auto self = weak.lock();
        if (ec || !self || !self->open()) return;
        const bool waiting_for_us = !self->outstanding_.empty() && self->out_.empty();
        if (self->active_ || waiting_for_us) return self->watch_idle();  // a job it waits for may take long
        if (!self->out_.empty()) {                                       // it does not read what it was sent
            self->manager_.stop(self);
            return;
        }
        const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(self->idle_timeout_).count();
        self->send_and_close(
            wire::make_error(0, wire::error_kind::busy, "idle for " + std::to_string(seconds) + " seconds; closing"));
    });
}

void connection::stop() {
    if (stopped_) return;
    stopped_ = true;
    boost::system::error_code ec;
    stall_timer_.cancel();
    idle_timer_.cancel();
    socket_.shutdown(socket_type::shutdown_both, ec);
    socket_.close(ec);
    fds_.clear();
    out_.clear();
}

std::optional<unique_fd> connection::take_fd() {
    if (fds_.empty()) return std::nullopt;
    unique_fd fd = std::move(fds_.front());
    fds_.pop_front();
    return fd;
}

void connection::wait_readable() {
    if (stopped_ || close_after_write_) return;
    socket_.async_wait(socket_type::wait_read, [self = shared_from_this()](const boost::system::error_code& ec) {
        if (ec) {
            if (ec != boost::asio::error::operation_aborted) self->manager_.stop(self);
            return;
        }
        self->on_readable();
    });
}

void connection::on_readable() {
    if (stopped_) return;
    char data[read_chunk];
    // Descriptors arrive with the first byte of the frame they belong to; kept in order.
    std::vector<unique_fd> arrived;
    const ssize_t n = receive_with_fds(socket_.native_handle(), data, sizeof data, MSG_DONTWAIT, arrived,
                                       max_pending_fds - fds_.size());
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        wait_readable();
        return;
    }
    for (unique_fd& fd : arrived) fds_.push_back(std::move(fd));
    if (n <= 0) {  // end of stream or error: the client is gone
        manager_.stop(shared_from_this());
        return;
    }
    active_ = true;
    if (auto fed = parser_.feed(std::string_view(data, static_cast<std::size_t>(n))); !fed) {
        send_and_close(wire::make_error(0, fed.error().kind, fed.error().message));
        return;
    }
    watch_stall();
    handle_next();
}

// One request per turn of the io thread: a client that sends many at once waits its turn behind the
// others, and nothing more is read from it until what it sent has been handled.
void connection::handle_next() {
    if (stopped_ || close_after_write_) return;
    auto payload = parser_.next();
    if (!payload) {
        // Every request received is handled: descriptors passed with them and not taken go now (a
        // client's own socket passed back to it would otherwise keep the connection open for ever).
        if (!parser_.partial()) fds_.clear();
        wait_readable();
        return;
    }
    auto request = wire::decode_request(*payload);
    if (!request) {
        send(wire::make_error(request.error().id, request.error().kind, request.error().message));
    } else {
        version_ = request->version;
        ++outstanding_[request->id];
        handler_.handle(*request, shared_from_this());
    }
    boost::asio::post(socket_.get_executor(), [self = shared_from_this()] { self->handle_next(); });
}

void connection::watch_stall() {
    if (!parser_.partial() || stopped_) {
        stall_timer_.cancel();
        return;
    }
    stall_timer_.expires_after(stall_timeout);
    stall_timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
        if (ec) return;
        if (auto self = weak.lock(); self && self->open() && self->parser_.partial())
            self->send_and_close(
                wire::make_error(0, wire::error_kind::bad_request, "message not completed within 30 seconds; closing"));
    });
}

void connection::send(const wire::reply& reply) {
    auto& io = static_cast<boost::asio::io_context&>(socket_.get_executor().context());
    if (!io.get_executor().running_in_this_thread()) {
        boost::asio::post(io, [self = shared_from_this(), reply] { self->send(reply); });
        return;
    }
    if (stopped_ || close_after_write_) return;
    if (reply.kind != wire::reply_kind::progress)
        if (auto it = outstanding_.find(reply.id); it != outstanding_.end() && --it->second == 0)
            outstanding_.erase(it);
    wire::reply versioned = reply;  // in the version the client speaks
    versioned.version = version_;
    auto frame = wire::encode_reply(versioned);
    if (!frame) {
        std::string message = frame.error().kind == wire::error_kind::too_large
                                  ? "the reply is too large for one message (" + frame.error().message +
                                        "); ask for less, e.g. with --top"
                                  : frame.error().message;
        versioned = wire::make_error(reply.id, frame.error().kind, message);
        versioned.version = version_;
        frame = wire::encode_reply(versioned);
        if (!frame) return;
    }
    out_bytes_ += frame->size();
    out_.push_back(std::move(*frame));
    if (out_bytes_ > max_out_bytes) {  // the client does not read its replies
        manager_.stop(shared_from_this());
        return;
    }
    if (!writing_) write_next();
}

void connection::send_and_close(const wire::reply& reply) {
    send(reply);
    close_after_write_ = true;
    if (!writing_ && out_.empty()) manager_.stop(shared_from_this());
}

void connection::write_next() {
    if (stopped_ || out_.empty()) return;
    writing_ = true;
    boost::asio::async_write(socket_, boost::asio::buffer(out_.front()),
                             [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                                 self->writing_ = false;
                                 if (self->stopped_) return;
                                 self->active_ = true;
                                 if (ec) {
                                     self->manager_.stop(self);
                                     return;
                                 }
                                 self->out_bytes_ -= self->out_.front().size();
                                 self->out_.pop_front();
                                 if (!self->out_.empty())
                                     self->write_next();
                                 else if (self->close_after_write_)
                                     self->manager_.stop(self);
                             });
}

}  // namespace heapd::daemon
