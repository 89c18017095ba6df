// The request handler's dumps asked for by the daemon's own dump rules (request_handler.h).
#include "daemon/server/handlers/request_handler.h"

namespace heapd::daemon {

result<job_record> request_handler::dump_for_rule(pid_t pid, std::uint64_t start_time, const std::string& rule,
                                                  bool live) {
    // The daemon itself asks, with root's rights; no client is waiting.
    peer_credentials daemon;
    daemon.pid = 0;
    daemon.uid = 0;
    daemon.gid = 0;
    daemon.admin = true;
    dump_args args;
    args.pid = static_cast<std::uint64_t>(pid);
    args.live = live;
    args.trigger = "rule:" + rule;
    args.start_time = start_time;
    auto d = prepare_dump(args, daemon, std::nullopt);
    if (!d) return std::unexpected(d.error());
    return submit_dump(std::move(*d), daemon, {});
}

}  // namespace heapd::daemon
