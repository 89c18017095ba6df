// The request handler's `sites` request (request_handler.h): heapd's allocation-sampling agent
// (agent/) in a JVM the caller may dump, started, shown, stopped or asked for its state. The attach
// runs on the samplers' pool, one command per JVM and at most half the pool per user at a time,
// each bounded in time however the JVM answers; the agent's answer is checked
// (formats/sites) before anything of it is ranked, logged or sent.
#include <boost/asio/post.hpp>

#include "attach/agent_control.h"
#include "daemon/jvms/jvm_facts.h"
#include "daemon/runtime/log_text.h"
#include "daemon/server/handlers/request_handler.h"
#include "formats/report/cpu_report.h"
#include "formats/report/sites_report.h"
#include "formats/sites/allocation_profile.h"
#include "formats/sites/cpu_ranking.h"
#include "formats/sites/site_ranking.h"
#include "formats/wire/error_kinds.h"
#include "formats/wire/sampling_limits.h"

namespace heapd::daemon {
namespace {

using wire::error_kind;

// A sites request's arguments, checked.
struct sites_args {
    std::string action;  // start, show, stop, status; cpu_start, cpu_show, cpu_stop
    int period_ms = 10;  // cpu_start
    std::int64_t interval = 512 * 1024;
    int depth = 16;
    bool gc = true;
    sites::table_options table;
};

wire::wire_result<sites_args> read_args(const wire::json& a) {
    auto action = wire::arg_string(a, "action", std::nullopt);
    auto interval = wire::arg_uint(a, "interval", 512 * 1024);
    auto depth = wire::arg_uint(a, "depth", 16);
    auto gc = wire::arg_bool(a, "gc", true);
    auto by = wire::arg_string(a, "by", "site");
    auto order = wire::arg_string(a, "order", "live");
    auto top = wire::arg_uint(a, "top", 0);
    auto period = wire::arg_uint(a, "period", 10);
    auto cutoff = a.contains("cutoff") && a["cutoff"].is_number() ? a["cutoff"].get<double>() : 0.0001;
    if (!action || !interval || !depth || !gc || !by || !order || !top || !period)
        return wire::wire_fail(
            error_kind::bad_request,
            "sites: a missing or mistyped argument (action, interval, depth, gc, by, order, top, period)");
    sites_args s;
    s.action = *action;
    if (s.action != "start" && s.action != "show" && s.action != "stop" && s.action != "status" &&
        s.action != "cpu_start" && s.action != "cpu_show" && s.action != "cpu_stop")
        return wire::wire_fail(error_kind::bad_request,
                               "sites: action is start, show, stop, status, cpu_start, cpu_show or cpu_stop");
    if (*period < wire::min_cpu_period_ms || *period > wire::max_cpu_period_ms)
        return wire::wire_fail(error_kind::bad_request, "sites: period 1 to 1000 ms");
    s.period_ms = static_cast<int>(*period);
    if (*interval > wire::max_sampling_interval || *depth < wire::min_sampling_depth ||
        *depth > wire::max_sampling_depth || *top > wire::max_sampling_rows ||
        !(cutoff >= wire::min_sites_cutoff && cutoff <= wire::max_sites_cutoff))
        return wire::wire_fail(error_kind::bad_request,
                               "sites: interval up to 2^31-1 bytes, depth 1 to 64, cutoff 0 to 1, top up to 10^6");
    if (*by != "site" && *by != "method" && *by != "class")
        return wire::wire_fail(error_kind::bad_request, "sites: by is site, method or class");
    if (*order != "live" && *order != "allocated")
        return wire::wire_fail(error_kind::bad_request, "sites: order is live or allocated");
    s.interval = static_cast<std::int64_t>(*interval);
    s.depth = static_cast<int>(*depth);
    s.gc = *gc;
    s.table.by = *by == "method"  ? sites::grouping::method
                 : *by == "class" ? sites::grouping::klass
                                  : sites::grouping::site;
    s.table.order = *order == "allocated" ? sites::ranking::allocated : sites::ranking::live;
    s.table.depth = s.depth;
    s.table.cutoff = cutoff;
    s.table.top = static_cast<unsigned>(*top);
    return s;
}

// The agent's command line for the arguments.
std::string agent_command_text(const sites_args& s) {
    if (s.action == "start")
        return "start,interval=" + std::to_string(s.interval) + ",depth=" + std::to_string(s.depth);
    if (s.action == "status" || s.action == "cpu_show" || s.action == "cpu_stop") return s.action;
    if (s.action == "cpu_start")
        return "cpu_start,period=" + std::to_string(s.period_ms) + ",depth=" + std::to_string(s.depth);
    return s.action + (s.gc ? ",gc=1" : "");
}

}  // namespace

void request_handler::sites(const wire::request& r, const connection_ptr& c) {
    auto args = read_args(r.args);
    auto named = wire::arg_uint(r.args, "pid", std::nullopt);
    if (!args || !named || *named == 0 || *named > 0x3fffffff)
        return c->send(wire::make_error(r.id, error_kind::bad_request,
                                        args ? "sites: pid must be a process id" : args.error().message));
    const peer_credentials& p = c->peer();
    // Who may sample a JVM: who may dump it.
    auto jvm = jvm_for_peer(*named, p);
    if (!jvm) return c->send(wire::make_error(r.id, wire::kind_of(jvm.error().code), jvm.error().message));
    const pid_t target = jvm->pid;
    const uid_t owner = jvm->owner;
    const std::string who = jvm->who;
    if (std::string why; !claim_sampler(target, owner, why))
        return c->send(wire::make_error(r.id, error_kind::busy, why));
    log_->info("sites {} of {} asked by uid {}", args->action, who, p.uid);
    const std::uint64_t start_time = jvm->start_time;
    boost::asio::post(samplers_, [this, r, c, target, owner, start_time, who, a = std::move(*args)] {
        auto reply = [&]() -> wire::reply {
            auto library = attach::find_agent_library(agent_library_);
            if (!library) return wire::make_error(r.id, error_kind::internal, library.error().message);
            attach::attach_options options;
            options.expected_start_time = start_time;
            options.timeout = std::chrono::seconds(30);
            auto text =
                attach::agent_command(target, {*library}, agent_command_text(a), sites::agent_protocol, options);
            if (!text) {
                log_->warn("sites {} of {}: {}", a.action, who, bounded_text(text.error().message));
                return wire::make_error(r.id, wire::kind_of(text.error().code), text.error().message);
            }
            auto profile = sites::parse_allocation_profile(*text);
            if (!profile) {
                log_->warn("sites {} of {}: {}", a.action, who, bounded_text(profile.error().message));
                return wire::make_error(r.id, error_kind::failed, who + ": " + profile.error().message);
            }
            if (!profile->error.empty())
                return wire::make_error(r.id, error_kind::failed, who + ": the agent: " + profile->error);
            // Moved, not copied, into the reply: a table may hold megabytes of names.
            wire::json result = wire::json::object();
            if (profile->has_tables) {
                result["table"] = to_json(sites::rank_sites(*profile, a.table, a.gc));
                return wire::make_result(r.id, std::move(result));
            }
            if (profile->has_cpu) {
                result["cpu"] = to_json(sites::rank_cpu(*profile, a.depth, a.table.top));
                return wire::make_result(r.id, std::move(result));
            }
            return wire::make_result(r.id, {{"sampling", profile->sampling},
                                            {"agent", profile->agent_version},
                                            {"interval", profile->interval},
                                            {"depth", profile->depth},
                                            {"seconds", profile->seconds},
                                            {"memory_bytes", profile->memory_bytes},
                                            {"cpu_sampling", profile->cpu_sampling},
                                            {"cpu_period_ms", profile->cpu_period_ms}});
        }();
        release_sampler(target, owner);
        c->send(std::move(reply));
    });
}

bool request_handler::claim_sampler(pid_t pid, uid_t owner, std::string& why) {
    std::lock_guard lock(sampling_mutex_);
    if (sampling_busy_.contains(pid)) {
        why = "a sites command to pid " + std::to_string(pid) + " is under way";
        return false;
    }
    unsigned& held = sampling_by_owner_[owner];
    if (held >= sampler_threads / 2) {
        why = "the JVMs of uid " + std::to_string(owner) + " have " + std::to_string(held) +
              " sites commands under way, as many as one user's JVMs may; try again when one has ended";
        return false;
    }
    ++held;
    sampling_busy_.insert(pid);
    return true;
}

void request_handler::release_sampler(pid_t pid, uid_t owner) {
    std::lock_guard lock(sampling_mutex_);
    sampling_busy_.erase(pid);
    if (auto it = sampling_by_owner_.find(owner); it != sampling_by_owner_.end() && --it->second == 0)
        sampling_by_owner_.erase(it);
}

result<std::string> request_handler::sample_for_rule(pid_t pid, std::uint64_t start_time, const dump_rule& rule) {
    auto jvm = find_jvm_facts(pid);
    if (!jvm) return std::unexpected(jvm.error());
    const uid_t owner = jvm->jvm.uid;
    if (std::string why; !claim_sampler(pid, owner, why)) return fail(error_code::busy, why);
    const std::string command =
        "start,interval=" + std::to_string(rule.sample_interval) + ",depth=" + std::to_string(rule.sample_depth);
    boost::asio::post(samplers_, [this, pid, owner, start_time, command, name = rule.name] {
        const std::string who = "pid " + std::to_string(pid);
        auto library = attach::find_agent_library(agent_library_);
        attach::attach_options options;
        options.expected_start_time = start_time;
        options.timeout = std::chrono::seconds(30);
        auto text = library ? attach::agent_command(pid, {*library}, command, sites::agent_protocol, options)
                            : std::unexpected(library.error());
        auto profile = text ? sites::parse_allocation_profile(*text) : std::unexpected(text.error());
        if (!profile)
            log_->warn("rule {}: cannot sample {}: {}", name, who, bounded_text(profile.error().message));
        else if (!profile->error.empty())
            log_->warn("rule {}: {}: the agent: {}", name, who, bounded_text(profile->error));
        else
            log_->info("rule {}: {} is sampled every {} bytes, {} frames", name, who, profile->interval,
                       profile->depth);
        release_sampler(pid, owner);
    });
    return std::string();
}

}  // namespace heapd::daemon
