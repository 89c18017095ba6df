// The request handler's metrics request (request_handler.h): the daemon's metrics in the Prometheus
// text format, gathered off the io_context thread; who is not an admin sees their own JVMs and
// dumps only, as `jvms` and `status` show them.
#include "daemon/metrics/metrics.h"
#include "daemon/metrics/metrics_service.h"
#include "daemon/server/handlers/request_handler.h"

namespace heapd::daemon {

void request_handler::metrics(const wire::request& r, const connection_ptr& c) {
    if (metrics_ == nullptr)
        return c->send(wire::make_error(r.id, wire::error_kind::internal, "this daemon keeps no metrics"));
    std::weak_ptr<connection> weak = c;
    const peer_credentials peer = c->peer();
    metrics_->gather([weak, id = r.id, peer](metrics_service::snapshot_ptr snapshot) {
        auto conn = weak.lock();
        if (!conn || !conn->open()) return;
        const std::string text =
            peer.admin ? render_metrics(*snapshot) : render_metrics(visible_to(*snapshot, peer.uid));
        conn->send(wire::make_result(id, {{"content_type", metrics_content_type}, {"text", text}}));
    });
}

}  // namespace heapd::daemon
