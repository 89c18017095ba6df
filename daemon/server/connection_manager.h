#pragma once
// The open connections, so the server can stop them all at shutdown, and the limits on them: no
// one user can take every connection, and a share is always left for root and the heapd group.
#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "daemon/server/connection.h"

namespace heapd::daemon {

// How many connections the daemon takes, and for how long an idle one stays.
struct connection_limits {
    std::size_t max_total = 256;
    std::size_t max_per_user = 32;                  // of one uid that is not an admin
    std::chrono::milliseconds idle_timeout{60000};  // no request outstanding and nothing sent or read
};

// Owns every open connection.
class connection_manager {
public:
    // Why a new connection of this peer is refused, or nothing when it is taken. Admins (root, the
    // heapd group) are limited only by max_total; the others share all but an eighth of it (at least
    // one connection), and each uid has at most max_per_user.
    std::optional<std::string> refusal(const peer_credentials& peer) const;
    void set_limits(const connection_limits& limits) { limits_ = limits; }
    const connection_limits& limits() const { return limits_; }
    // Takes the connection and starts it.
    void start(const connection_ptr& c);
    // Stops the connection and lets it go.
    void stop(const connection_ptr& c);
    void stop_all();
    std::size_t size() const { return connections_.size(); }

private:
    std::set<connection_ptr> connections_;
    std::map<uid_t, std::size_t> per_uid_;  // open connections of each uid that is not an admin
    std::size_t users_ = 0;                 // of them all
    connection_limits limits_;
};

}  // namespace heapd::daemon
