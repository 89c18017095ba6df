#include "daemon/server/connection_manager.h"

#include <algorithm>

namespace heapd::daemon {

std::optional<std::string> connection_manager::refusal(const peer_credentials& peer) const {
    if (connections_.size() >= limits_.max_total) return "too many clients; try again";
    if (peer.admin) return std::nullopt;
    const std::size_t reserved = std::max<std::size_t>(1, limits_.max_total / 8);
    if (users_ + reserved >= limits_.max_total) return "too many clients; try again";
    auto it = per_uid_.find(peer.uid);
    if (it != per_uid_.end() && it->second >= limits_.max_per_user)
        return "too many connections of uid " + std::to_string(peer.uid) + " (at most " +
               std::to_string(limits_.max_per_user) + " at once); close some and try again";
    return std::nullopt;
}

void connection_manager::start(const connection_ptr& c) {
    connections_.insert(c);
    if (!c->peer().admin) {
        ++per_uid_[c->peer().uid];
        ++users_;
    }
    c->start(limits_.idle_timeout);
}

void connection_manager::stop(const connection_ptr& c) {
    if (connections_.erase(c) != 0 && !c->peer().admin) {
        auto it = per_uid_.find(c->peer().uid);
        if (it != per_uid_.end() && --it->second == 0) per_uid_.erase(it);
        --users_;
    }
    c->stop();
}

void connection_manager::stop_all() {
    for (const connection_ptr& c : connections_) c->stop();
    connections_.clear();
    per_uid_.clear();
    users_ = 0;
}

}  // namespace heapd::daemon
