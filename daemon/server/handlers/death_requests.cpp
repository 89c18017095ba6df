// The request handler's `deaths`: the records of the JVMs that died while heapd watched them
// (death_store.h), those of the caller's JVMs (every one for root and the heapd group), newest first.
#include "daemon/server/handlers/request_handler.h"

namespace heapd::daemon {

void request_handler::deaths(const wire::request& r, const connection_ptr& c) {
    wire::json list = wire::json::array();
    if (deaths_ != nullptr)
        for (wire::json& d : deaths_->list([&](uid_t owner) { return may_access(c->peer(), owner); }))
            list.push_back(std::move(d));
    c->send(wire::make_result(r.id, {{"deaths", std::move(list)}}));
}

}  // namespace heapd::daemon
