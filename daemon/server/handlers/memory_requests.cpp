// The request handler's `memory` request (request_handler.h): where the memory of a JVM the caller
// may dump goes, against the limit that holds it (daemon/jvms/memory_probe.h). The probe asks the
// JVM through attach, so it runs on the samplers' pool under the same bounds as a sites command: one
// command per JVM, at most half the pool per user, each answer bounded in time.
#include <boost/asio/post.hpp>

#include "daemon/jvms/memory_probe.h"
#include "daemon/server/handlers/request_handler.h"
#include "formats/memory/memory_report.h"
#include "formats/wire/error_kinds.h"

namespace heapd::daemon {

void request_handler::memory(const wire::request& r, const connection_ptr& c) {
    auto named = wire::arg_uint(r.args, "pid", std::nullopt);
    auto attach = wire::arg_bool(r.args, "attach", true);
    if (!named || !attach || *named == 0 || *named > 0x3fffffff)
        return c->send(wire::make_error(r.id, wire::error_kind::bad_request,
                                        "memory: pid must be a process id, attach a boolean"));
    // Who may see a JVM's memory: who may dump it.
    auto jvm = jvm_for_peer(*named, c->peer());
    if (!jvm) return c->send(wire::make_error(r.id, wire::kind_of(jvm.error().code), jvm.error().message));
    const pid_t target = jvm->pid;
    const uid_t owner = jvm->owner;
    const std::string who = jvm->who;
    if (std::string why; !claim_sampler(target, owner, why))
        return c->send(wire::make_error(r.id, wire::error_kind::busy, why));
    boost::asio::post(samplers_, [this, r, c, target, owner, who, asks = *attach] {
        memory_probe_options options;
        options.attach = asks;
        auto b = probe_memory(target, options);
        release_sampler(target, owner);
        if (!b) return c->send(wire::make_error(r.id, wire::kind_of(b.error().code), who + ": " + b.error().message));
        c->send(wire::make_result(r.id, {{"memory", to_json(*b)}}));
    });
}

}  // namespace heapd::daemon
