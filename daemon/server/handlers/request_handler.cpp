#include "daemon/server/handlers/request_handler.h"
#include "formats/wire/error_kinds.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <boost/asio/post.hpp>

#include "attach/process_info.h"
#include "daemon/jobs/analyze_job.h"
#include "daemon/jvms/jvm_facts.h"
#include "formats/report/report_json.h"

namespace heapd::daemon {
namespace {

using wire::error_kind;

constexpr std::size_t max_name_bytes = 4096;

// The id of a job or dump named in the request, or an error reply sent and nullopt.
template <class T>
std::optional<T> argument(const wire::wire_result<T>& v, const wire::request& r, const connection_ptr& c) {
    if (v) return *v;
    send_error(c, r.id, v.error().kind, v.error().message);
    return std::nullopt;
}

}  // namespace

void send_error(const connection_ptr& c, std::uint64_t id, error_kind kind, std::string message) {
    c->send(wire::make_error(id, kind, std::move(message)));
}

wire::json report_for_client(analysis_report r, unsigned top) {
    if (top != 0 && r.histogram.size() > top) r.histogram.resize(top);
    const std::size_t lists = top == 0 ? 20 : top;
    auto cut = [lists](auto& v) {
        if (v.size() > lists) v.resize(lists);
    };
    cut(r.largest_objects);
    cut(r.retention.dominators);
    cut(r.retention.retained_by_class);
    cut(r.waste.duplicate_strings_top);
    return to_json(r);
}

request_handler::request_handler(daemon_info info, store& s, job_manager& jobs, std::shared_ptr<spdlog::logger> log)
    : info_(std::move(info)), store_(s), jobs_(jobs), log_(std::move(log)) {}

result<request_handler::peer_jvm> request_handler::jvm_for_peer(std::uint64_t named, const peer_credentials& p) {
    if (named == 0 || named > 0x3fffffff) return fail(error_code::bad_value, "pid must be a process id");
    auto host = host_pid(p, static_cast<pid_t>(named));
    if (!host) return std::unexpected(host.error());
    peer_jvm j;
    j.pid = *host;
    j.who = "pid " + std::to_string(j.pid);
    auto jvm = find_jvm_facts(j.pid);
    if (!jvm) return fail(jvm.error().code, j.who + ": " + jvm.error().message);
    if (!may_access(p, jvm->jvm.uid)) return fail(error_code::permission_denied, j.who + " belongs to another user");
    auto info = attach::read_process_info(j.pid);
    if (!info) return fail(info.error().code, j.who + ": " + info.error().message);
    j.owner = jvm->jvm.uid;
    j.start_time = info->start_time;
    return j;
}

void request_handler::handle(const wire::request& r, const connection_ptr& c) {
    if (r.type == "status")
        status(r, c);
    else if (r.type == "jobs")
        jobs(r, c);
    else if (r.type == "analyze")
        analyze(r, c);
    else if (r.type == "report")
        boost::asio::post(readers_, [this, r, c] { report(r, c); });
    else if (r.type == "dumps")
        dumps(r, c);
    else if (r.type == "deaths")
        boost::asio::post(readers_, [this, r, c] { deaths(r, c); });
    else if (r.type == "rm")
        remove(r, c);
    else if (r.type == "cancel")
        cancel(r, c);
    else if (r.type == "dump")
        dump(r, c);
    else if (r.type == "jvms")
        boost::asio::post(readers_, [this, r, c] { jvms(r, c); });
    else if (r.type == "diff")
        boost::asio::post(readers_, [this, r, c] { diff(r, c); });
    else if (r.type == "path")
        path(r, c);
    else if (r.type == "metrics")
        metrics(r, c);
    else if (r.type == "memory")
        memory(r, c);
    else if (r.type == "sites")
        sites(r, c);
    else
        send_error(c, r.id, error_kind::unknown_type, "unknown request type \"" + r.type + "\"");
}

void request_handler::status(const wire::request& r, const connection_ptr& c) {
    const peer_credentials& p = c->peer();
    std::uint64_t dumps = 0, bytes = 0;
    for (const entry_metadata& m : store_.entries())
        if (may_access(p, m.owner_uid)) {
            ++dumps;
            bytes += m.stored_bytes;
        }
    auto counts = jobs_.count();
    const std::int64_t now = now_ms();
    c->send(wire::make_result(r.id, {{"version", info_.version},
                                     {"protocol", wire::protocol_version},
                                     {"pid", info_.pid},
                                     {"host", info_.host},
                                     {"uptime_ms", now - info_.started_ms},
                                     {"socket", info_.socket_path},
                                     {"store", {{"path", store_.root()}, {"dumps", dumps}, {"bytes", bytes}}},
                                     {"workers", jobs_.workers()},
                                     {"jobs", {{"queued", counts.queued}, {"running", counts.running}}},
                                     {"you", {{"uid", p.uid}, {"gid", p.gid}, {"admin", p.admin}}}}));
}

void request_handler::jobs(const wire::request& r, const connection_ptr& c) {
    wire::json list = wire::json::array();
    const std::int64_t now = now_ms();
    for (const job_record& j : jobs_.list())
        if (may_access(c->peer(), j.owner_uid)) list.push_back(to_json(j, now));
    c->send(wire::make_result(r.id, {{"jobs", std::move(list)}}));
}

void request_handler::analyze(const wire::request& r, const connection_ptr& c) {
    auto fd = c->take_fd();
    auto name = argument(wire::arg_string(r.args, "name", std::nullopt), r, c);
    auto wait = argument(wire::arg_bool(r.args, "wait", true), r, c);
    auto top = argument(wire::arg_uint(r.args, "top", 0), r, c);
    auto history = argument(wire::arg_bool(r.args, "history", false), r, c);
    if (!name || !wait || !top || !history) return;
    if (!fd)
        return send_error(c, r.id, error_kind::bad_request,
                          "analyze needs the dump's file descriptor, passed with the request (SCM_RIGHTS)");
    if (name->empty() || name->size() > max_name_bytes)
        return send_error(c, r.id, error_kind::bad_request, "the dump's name is empty or too long");
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode))
        return send_error(c, r.id, error_kind::bad_input, *name + " is not a regular file");
    int flags = ::fcntl(fd->get(), F_GETFL);
    if (flags < 0 || (flags & O_ACCMODE) == O_WRONLY)
        return send_error(c, r.id, error_kind::bad_input, *name + ": the descriptor is not open for reading");
    if (auto full = queue_full(c->peer().uid)) return send_error(c, r.id, error_kind::busy, *full);

    const peer_credentials& p = c->peer();
    job_record spec;
    spec.kind = "analyze";
    spec.owner_uid = p.uid;
    spec.owner_gid = p.gid;
    spec.client_pid = p.pid;
    spec.trigger = "heapctl report";
    spec.subject = *name;
    spec.subject_bytes = static_cast<std::uint64_t>(st.st_size);
    analyze_request work{std::move(*fd), *name, p.uid, p.gid, spec.trigger, info_.host};

    job_listener listener;
    if (*wait) listener = waiting_listener(r.id, *top, *history, c);
    job_record job = jobs_.submit(spec, make_analyze_work(store_, std::move(work)), std::move(listener));
    if (!*wait) c->send(wire::make_result(r.id, {{"job", to_json(job, now_ms())}}));
}

std::optional<std::string> request_handler::queue_full(uid_t requester, bool oom) const {
    const std::size_t queued = jobs_.count().queued;
    const std::size_t room =
        info_.max_queued + (requester == 0 || oom ? root_queue_reserve : 0) + (oom ? oom_queue_reserve : 0);
    if (queued >= room) return "too many jobs waiting (" + std::to_string(room) + "); try again later";
    if (requester == 0 || oom) return std::nullopt;
    const std::size_t share = std::max<std::size_t>(1, info_.max_queued / 4);
    if (jobs_.queued_of(requester) >= share)
        return "you have " + std::to_string(share) +
               " jobs waiting already, one user's share of the queue; try again once one has started";
    return std::nullopt;
}

job_listener request_handler::waiting_listener(std::uint64_t request_id, std::uint64_t top, bool history,
                                               const connection_ptr& c) {
    // Progress events while it runs, then the result; nothing once the client is gone.
    std::weak_ptr<connection> weak = c;
    return [this, weak, request_id, history,
            top = static_cast<unsigned>(std::min<std::uint64_t>(top, 1u << 30))](const job_record& job) {
        auto conn = weak.lock();
        if (!conn || !conn->open()) return;
        if (job.final())
            boost::asio::post(readers_, [this, job, request_id, top, history, conn] {
                job_ended(job, request_id, top, history, conn);
            });
        else if (job.state == job_state::running && !job.phase.empty())
            conn->send(wire::make_progress(request_id, {job.id, job.phase, job.done, job.total}));
    };
}

void request_handler::job_ended(const job_record& job, std::uint64_t request_id, unsigned top, bool history,
                                const connection_ptr& c) {
    const std::string prefix = "job " + std::to_string(job.id) + ": ";
    if (job.state == job_state::cancelled) return send_error(c, request_id, error_kind::cancelled, prefix + job.error);
    if (job.state == job_state::failed) {
        error_kind kind = wire::error_kind_from_name(job.error_kind);
        return send_error(c, request_id, kind == error_kind::other ? error_kind::failed : kind, prefix + job.error);
    }
    auto meta = store_.find(job.entry);
    auto report = store_.load_report(job.entry);
    if (!meta || !report)
        return send_error(c, request_id, error_kind::internal,
                          prefix + (report ? "its dump was removed" : report.error().message));
    wire::json result = {{"job", to_json(job, now_ms())}, {"dump", to_json(*meta)}};
    add_report_context(result, *meta, *report, c->peer(), history);
    result["report"] = report_for_client(std::move(*report), top);
    c->send(wire::make_result(request_id, std::move(result)));
}

void request_handler::report(const wire::request& r, const connection_ptr& c) {
    auto pid = argument(wire::arg_uint(r.args, "pid", 0), r, c);
    if (!pid) return;
    auto id =
        argument(wire::arg_string(r.args, "dump", *pid != 0 ? std::optional<std::string>("") : std::nullopt), r, c);
    auto top = argument(wire::arg_uint(r.args, "top", 0), r, c);
    auto history = argument(wire::arg_bool(r.args, "history", false), r, c);
    if (!id || !top || !history) return;
    if (*pid != 0) {
        // The latest dump of that JVM the caller may see.
        auto dumps = dumps_of(static_cast<std::int64_t>(std::min<std::uint64_t>(*pid, 1u << 31)), c->peer());
        if (!dumps.empty()) *id = dumps.front().id;
        if (id->empty()) return send_error(c, r.id, error_kind::not_found, "no dump of pid " + std::to_string(*pid));
    }
    auto meta = valid_entry_id(*id) ? store_.find(*id) : std::nullopt;
    if (!meta) return send_error(c, r.id, error_kind::not_found, "no dump " + *id);
    if (!may_access(c->peer(), meta->owner_uid))
        return send_error(c, r.id, error_kind::permission_denied, "dump " + *id + " belongs to another user");
    auto report = store_.load_report(*id);
    if (!report) {
        log_->error("dump {}: {}", *id, report.error().message);
        return send_error(c, r.id, wire::kind_of(report.error().code), report.error().message);
    }
    wire::json result = {{"dump", to_json(*meta)}};
    add_report_context(result, *meta, *report, c->peer(), *history);
    result["report"] =
        report_for_client(std::move(*report), static_cast<unsigned>(std::min<std::uint64_t>(*top, 1u << 30)));
    c->send(wire::make_result(r.id, std::move(result)));
}

void request_handler::dumps(const wire::request& r, const connection_ptr& c) {
    wire::json list = wire::json::array();
    for (const entry_metadata& m : store_.entries())
        if (may_access(c->peer(), m.owner_uid)) list.push_back(to_json(m));
    wire::json result = {{"dumps", std::move(list)}};
    // Whose they were is unknown: only root and the group see them.
    if (c->peer().admin && !store_.damaged().empty()) {
        wire::json damaged = wire::json::array();
        for (const damaged_entry& d : store_.damaged())
            damaged.push_back({{"id", d.id}, {"why", d.why}, {"path", d.path}});
        result["damaged"] = std::move(damaged);
    }
    c->send(wire::make_result(r.id, std::move(result)));
}

void request_handler::remove(const wire::request& r, const connection_ptr& c) {
    auto id = argument(wire::arg_string(r.args, "dump", std::nullopt), r, c);
    if (!id) return;
    auto meta = valid_entry_id(*id) ? store_.find(*id) : std::nullopt;
    if (!meta) return send_error(c, r.id, error_kind::not_found, "no dump " + *id);
    if (!may_access(c->peer(), meta->owner_uid))
        return send_error(c, r.id, error_kind::permission_denied, "dump " + *id + " belongs to another user");
    if (auto removed = store_.remove(*id); !removed)
        return send_error(c, r.id, wire::kind_of(removed.error().code), removed.error().message);
    log_->info("dump {} removed by uid {}", *id, c->peer().uid);
    c->send(wire::make_result(r.id, {{"removed", *id}}));
}

void request_handler::cancel(const wire::request& r, const connection_ptr& c) {
    auto id = argument(wire::arg_uint(r.args, "job", std::nullopt), r, c);
    if (!id) return;
    auto job = jobs_.find(*id);
    if (!job) return send_error(c, r.id, error_kind::not_found, "no job " + std::to_string(*id));
    if (!may_access(c->peer(), job->owner_uid))
        return send_error(c, r.id, error_kind::permission_denied,
                          "job " + std::to_string(*id) + " belongs to another user");
    if (job->final())
        return send_error(
            c, r.id, error_kind::bad_request,
            "job " + std::to_string(*id) + " has already ended (" + std::string(job_state_name(job->state)) + ")");
    auto after = jobs_.cancel(*id);
    log_->info("job {} cancel asked by uid {}", *id, c->peer().uid);
    c->send(wire::make_result(r.id, {{"job", to_json(after ? *after : *job, now_ms())}}));
}

}  // namespace heapd::daemon
