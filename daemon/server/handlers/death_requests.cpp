// The request handler's `deaths`: the records of the JVMs that died while heapd watched them
// (death_store.h), those of the caller's JVMs (every one for root and the heapd group), newest first,
// as many as one reply holds (fair_listing.h).
#include "daemon/server/fair_listing.h"
#include "daemon/server/handlers/request_handler.h"

namespace heapd::daemon {

void request_handler::deaths(const wire::request& r, const connection_ptr& c) {
    std::vector<owned_item> list;
    if (deaths_ != nullptr)
        for (wire::json& d : deaths_->list([&](uid_t owner) { return may_access(c->peer(), owner); })) {
            const uid_t owner = d["death"]["uid"].get<uid_t>();  // list() checked it is one
            list.push_back({owner, std::move(d)});
        }
    fair_listing kept = list_fairly(std::move(list));
    c->send(wire::make_result(r.id, {{"deaths", std::move(kept.items)}, {"left_out", std::move(kept.left_out)}}));
}

}  // namespace heapd::daemon
