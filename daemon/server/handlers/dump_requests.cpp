// The request handler's dump and jvms requests, and the spooled dump requests (request_handler.h).
#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>

#include "attach/jvm_discovery.h"
#include "attach/owner_files.h"
#include "attach/process_info.h"
#include "attach/process_namespaces.h"
#include "daemon/jvms/container_identity.h"
#include "daemon/jvms/jvm_facts.h"
#include "daemon/jvms/memory_probe.h"
#include "daemon/oom/arm_jvm.h"
#include "daemon/oom/spool.h"
#include "daemon/runtime/log_text.h"
#include "daemon/server/fair_listing.h"
#include "daemon/server/handlers/request_handler.h"
#include "formats/wire/error_kinds.h"

namespace heapd::daemon {
namespace {

using wire::error_kind;

// The longest oom_error taken: the agent's line names the error and two methods.
constexpr std::size_t max_oom_error_bytes = 1024;

}  // namespace

void request_handler::jvms(const wire::request& r, const connection_ptr& c) {
    auto found = attach::discover_jvms();
    if (!found) return c->send(wire::make_error(r.id, error_kind::internal, found.error().message));
    std::vector<owned_item> list;
    const peer_credentials& peer = c->peer();
    for (const attach::discovered_jvm& j : found->jvms) {
        if (!may_access(peer, j.uid)) continue;
        // A client in a container sees the JVMs of its container, by the pids they have there.
        auto seen_as = peer.pid_ns ? attach::pid_in_namespace(j.pid, *peer.pid_ns) : j.pid;
        if (!seen_as) continue;
        wire::json facts = to_json(read_jvm_facts(j));
        facts["pid"] = *seen_as;
        if (const auto memory = glance_memory(j.pid)) facts["memory"] = to_json(*memory);
        auto info = attach::read_process_info(j.pid);
        if (info && j.in_container) facts["container"] = to_json(container_of(j.pid, info->start_time));
        if (auto armed = armer_ && info ? armer_->status_of({j.pid, info->start_time}) : std::nullopt)
            facts["oom_arming"] = to_json(*armed);
        if (auto outlook = watcher_ && info ? watcher_->outlook_of({j.pid, info->start_time}) : std::nullopt)
            facts["heap_trend"] = to_json(*outlook);
        list.push_back({j.uid, std::move(facts)});
    }
    fair_listing kept = list_fairly(std::move(list));
    c->send(wire::make_result(
        r.id,
        {{"jvms", std::move(kept.items)}, {"unreadable", found->unreadable}, {"left_out", std::move(kept.left_out)}}));
}

wire::wire_result<dump_args> read_dump_args(const wire::json& args) {
    auto pid = wire::arg_uint(args, "pid", std::nullopt);
    auto live = wire::arg_bool(args, "live", true);
    auto trigger = wire::arg_string(args, "trigger", "request");
    auto oom = wire::arg_bool(args, "in_oom_hook", false);
    auto adopt_name = wire::arg_string(args, "dump_path", "");
    auto jvm_version = wire::arg_string(args, "jvm", "");
    auto command = wire::arg_string(args, "command", "");
    auto start_time = wire::arg_uint(args, "start_time", 0);
    auto snapshot = wire::arg_bool(args, "snapshot", false);
    auto oom_kind = wire::arg_string(args, "oom_kind", "");
    auto oom_error = wire::arg_string(args, "oom_error", "");
    if (!pid || !live || !trigger || !oom || !adopt_name || !jvm_version || !command || !start_time || !snapshot ||
        !oom_kind || !oom_error)
        return wire::wire_fail(error_kind::bad_request,
                               "dump: a missing or mistyped argument (pid, live, trigger, in_oom_hook, dump_path, "
                               "jvm, command, start_time, snapshot, oom_kind, oom_error)");
    if (*pid == 0 || *pid > 0x3fffffff)
        return wire::wire_fail(error_kind::bad_request, "dump: pid must be a process id");
    if (*trigger != "request" && *trigger != "oom")
        return wire::wire_fail(error_kind::bad_request, "dump: trigger is request or oom");
    // The kinds heapd's agent names (agent/oom_watch.h), for an OOM dump only.
    if (!oom_kind->empty() &&
        (*trigger != "oom" || (*oom_kind != "direct-buffer" && *oom_kind != "native-thread" && *oom_kind != "thrown")))
        return wire::wire_fail(error_kind::bad_request,
                               "dump: oom_kind is direct-buffer, native-thread or thrown, with trigger oom");
    if (oom_error->size() > max_oom_error_bytes)
        return wire::wire_fail(error_kind::bad_request,
                               "dump: oom_error is longer than " + std::to_string(max_oom_error_bytes) + " bytes");
    // As a JVM's own hsperfdata says them (jvm_perf_summary): 4 KiB each at most.
    if (jvm_version->size() > max_summary_text || command->size() > max_summary_text)
        return wire::wire_fail(error_kind::bad_request,
                               "dump: jvm and command are " + std::to_string(max_summary_text) + " bytes at most");
    return dump_args{*pid,        *live,        *trigger, *oom_kind,   *oom_error, *oom,
                     *adopt_name, *jvm_version, *command, *start_time, *snapshot};
}

namespace {

// The dump as one of the running JVM target: its owner and start time, what a snapshot from outside
// needs, and what its hsperfdata says.
void attribute_to_running_jvm(dump_request& d, const dump_args& a, const jvm_facts& jvm,
                              const attach::process_info& info, pid_t target) {
    d.uid = jvm.jvm.uid;
    d.gid = info.egid;
    d.start_time = info.start_time;
    d.container = to_json(container_of(target, info.start_time));
    // A snapshot from outside, for a JVM its hook holds that wrote no dump or one that takes no
    // attach: its JDK's jhsdb (the executable's path as the JVM sees it) runs as the JVM's user, in
    // the JVM's mount namespace when it is in a container.
    if (!d.adopt) {
        std::error_code ec;
        const std::string exe = std::filesystem::read_symlink(attach::proc_path(target, "exe"), ec).string();
        if (!ec && !exe.empty()) {
            d.fallback_exe = exe;
            if (a.snapshot && a.in_oom_hook && oom_hook_running(target)) {
                d.exe = exe;
                d.snapshot = true;
            }
        }
    }
    if (jvm.summary) {
        d.estimate = static_cast<std::uint64_t>(std::max<std::int64_t>(jvm.summary->heap.used, 0));
        d.jvm = jvm.summary->vm_version;
        d.command_line = jvm.summary->command;
    }
}

// An adopted dump of a JVM that is gone (or whose pid another process holds now). An admin's word
// is taken (root and the heapd group may act on any JVM), and so is a dump at heapd's own armed
// name for that JVM tagged for this caller (arm_jvm.h): heapd armed it for a JVM of theirs.
// Anything else is kept as the caller's own file: the pid is only what they claim, and neither the
// start time, version nor command they give is taken, so it is never a dump of that JVM in a
// report, history, diff or upload of it, and no OOM table is taken for it.
dump_request adopted_from_a_gone_jvm(dump_request d, const dump_args& a, const peer_credentials& p, pid_t named,
                                     const std::string& who, const hash_key& key) {
    const std::size_t slash = a.dump_path.rfind('/');
    const std::string name = slash == std::string::npos ? a.dump_path : a.dump_path.substr(slash + 1);
    if (a.start_time != 0 && (p.admin || armed_dump_vouched(key, name, named, a.start_time, p.uid))) {
        d.start_time = a.start_time;
        // Named while it ran (arming reads it), so also for a JVM and container gone since.
        d.container = to_json(container_of(d.pid, a.start_time));
        return d;
    }
    d.claimed = true;
    d.start_time.reset();
    d.jvm.clear();
    d.command_line.clear();
    if (a.dump_path.empty()) d.adopt_name = "a dump";
    d.adopt_name += " (uid " + std::to_string(p.uid) + " says it is the dump of " + who +
                    "; not verified: that JVM does not run now)";
    return d;
}

}  // namespace

result<dump_request> request_handler::prepare_dump(const dump_args& a, const peer_credentials& p,
                                                   std::optional<unique_fd> fd) {
    // A client in a container (the hook of a JVM in it) names the JVM by its pid there.
    const auto named = static_cast<pid_t>(a.pid);
    auto host = host_pid(p, named);
    const pid_t target = host ? *host : named;
    std::string who = "pid " + std::to_string(target);
    if (target != named) who += " (" + std::to_string(named) + " in the caller's container)";

    dump_request d;
    d.pid = target;
    d.live = a.live;
    d.trigger = a.trigger;
    d.oom_kind = a.oom_kind;
    d.oom_error = a.oom_error;
    d.wait_for_jvm = a.in_oom_hook;
    d.host = info_.host;
    if (fd) {
        struct stat st {};
        if (::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode))
            return fail(error_code::bad_value, a.dump_path + " is not a regular file");
        d.adopt = std::move(*fd);
        d.adopt_name = a.dump_path.empty() ? "the dump of " + who : a.dump_path;
        // Opened with the caller's own rights: the caller's, or for an admin the file owner's.
        d.uid = p.admin ? st.st_uid : p.uid;
        d.gid = p.admin ? st.st_gid : p.gid;
        d.jvm = a.jvm;
        d.command_line = a.command;
    }
    // The process the pid names now. Whatever the request says of its start time, a dump is never
    // attributed to a process the caller may not touch: a start time that differs (or none) is no
    // way around the check, and an adopted file is then kept as the dump of that earlier process.
    auto info = host ? attach::read_process_info(target) : std::unexpected(host.error());
    if (!info) {
        if (!d.adopt) return fail(info.error().code, who + ": " + info.error().message);
        return adopted_from_a_gone_jvm(std::move(d), a, p, named, who, store_.key());
    }
    auto jvm = find_jvm_facts(target);
    const uid_t owner = jvm ? jvm->jvm.uid : info->euid;
    if (!may_access(p, owner)) return fail(error_code::permission_denied, who + " belongs to another user");
    const bool same = a.start_time == 0 || info->start_time == a.start_time;
    if (same && jvm) {
        attribute_to_running_jvm(d, a, *jvm, *info, target);
        return d;
    }
    if (!d.adopt) {
        if (!same) return fail(error_code::not_found, who + " is another process now");
        return fail(jvm.error().code, who + ": " + jvm.error().message);
    }
    return adopted_from_a_gone_jvm(std::move(d), a, p, named, who, store_.key());
}

result<job_record> request_handler::submit_dump(dump_request d, const peer_credentials& p, job_listener waiting,
                                                bool oom) {
    const pid_t target = d.pid;
    const std::string who = "pid " + std::to_string(target);
    // Adopting a file the JVM wrote asks nothing of the JVM: it may go beside a dump through attach.
    const bool talks_to_jvm = !d.adopt;
    if (talks_to_jvm && dumping_.contains(target))
        return fail(error_code::busy, "a dump of " + who + " is already under way");
    if (auto full = queue_full(p.uid, oom)) return fail(error_code::busy, *full);
    job_record spec;
    spec.kind = "dump";
    spec.owner_uid = d.uid;
    spec.owner_gid = d.gid;
    spec.client_pid = p.pid;
    spec.jvm_pid = target;
    spec.trigger = d.trigger;
    spec.subject = d.adopt ? d.adopt_name : who;
    spec.subject_bytes = d.estimate;
    if (talks_to_jvm) dumping_.insert(target);
    job_listener listener = [this, target, talks_to_jvm, waiting = std::move(waiting)](const job_record& job) {
        if (job.final() && talks_to_jvm) dumping_.erase(target);
        if (waiting) waiting(job);
    };
    log_->info("dump of {} asked by uid {} (trigger {}{}{})", who, p.uid, d.trigger,
               d.oom_kind.empty() ? std::string() : ": " + d.oom_kind + ", " + bounded_text(d.oom_error),
               d.adopt ? ", adopting " + bounded_text(d.adopt_name) : std::string());
    return jobs_.submit(spec, make_dump_work(store_, std::move(d)), std::move(listener));
}

void request_handler::dump(const wire::request& r, const connection_ptr& c) {
    auto wait = wire::arg_bool(r.args, "wait", false);
    auto top = wire::arg_uint(r.args, "top", 0);
    auto adopt = wire::arg_bool(r.args, "adopt", false);
    auto history = wire::arg_bool(r.args, "history", false);
    if (!wait || !top || !adopt || !history)
        return c->send(
            wire::make_error(r.id, error_kind::bad_request, "dump: wait, top, adopt or history is mistyped"));
    std::optional<unique_fd> fd;
    if (*adopt) {
        fd = c->take_fd();
        if (!fd)
            return c->send(
                wire::make_error(r.id, error_kind::bad_request,
                                 "dump: adopt needs the dump's descriptor, passed with the request (SCM_RIGHTS)"));
    }
    auto a = read_dump_args(r.args);
    if (!a) return c->send(wire::make_error(r.id, a.error().kind, a.error().message));
    // The OnOutOfMemoryError hook's request: held in the OOM intake until its entry is kept.
    if (a->in_oom_hook && a->trigger == "oom")
        return oom_from_hook(r, c, std::move(fd), *wait ? waiting_listener(r.id, *top, *history, c) : job_listener{});
    auto d = prepare_dump(*a, c->peer(), std::move(fd));
    if (!d) return c->send(wire::make_error(r.id, wire::kind_of(d.error().code), d.error().message));
    auto job =
        submit_dump(std::move(*d), c->peer(), *wait ? waiting_listener(r.id, *top, *history, c) : job_listener{});
    if (!job) return c->send(wire::make_error(r.id, wire::kind_of(job.error().code), job.error().message));
    if (!*wait) c->send(wire::make_result(r.id, {{"job", to_json(*job, now_ms())}}));
}

}  // namespace heapd::daemon
