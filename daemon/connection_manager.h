#pragma once
// The open connections, so the server can stop them all at shutdown.
#include <cstddef>
#include <set>

#include "connection.h"

namespace heapd::daemon {

// Owns every open connection.
class connection_manager {
public:
    // Takes the connection and starts it.
    void start(const connection_ptr& c);
    // Stops the connection and lets it go.
    void stop(const connection_ptr& c);
    void stop_all();
    std::size_t size() const { return connections_.size(); }

private:
    std::set<connection_ptr> connections_;
};

} // namespace heapd::daemon
