// The request handler's questions about stored dumps: diff (what grew between two dumps of a JVM),
// path (the shortest paths from GC roots to an object), and what grew since the previous dump, for
// the report (request_handler.h).
#include <cstdio>

#include "analysis/dump_diff.h"
#include "attach/process_info.h"
#include "base/hex_text.h"
#include "daemon/jobs/path_job.h"
#include "daemon/server/handlers/request_handler.h"
#include "formats/report/report_json.h"
#include "formats/wire/error_kinds.h"

namespace heapd::daemon {
namespace {

using wire::error_kind;

constexpr std::size_t max_paths_bytes = 64u << 20;
// Rows of the growth since the previous dump shown with a report.
constexpr unsigned growth_rows = 10;
// Dumps of a JVM in a report's history (each one's stored report is read).
constexpr std::size_t max_history_points = 30;

// True when both entries are dumps of one JVM: the same pid and the same process start time (a pid
// reused by a later JVM is another JVM; an unknown start time matches nothing, not everything).
bool same_jvm(const entry_metadata& a, const entry_metadata& b) {
    if (a.pid == 0 || a.pid != b.pid || a.host != b.host) return false;
    return a.jvm_start_time != 0 && a.jvm_start_time == b.jvm_start_time;
}

}  // namespace

std::vector<entry_metadata> request_handler::dumps_of(std::int64_t named, const peer_credentials& p) const {
    std::vector<entry_metadata> out;
    // A client in a container names a JVM of its own by its pid there (while it runs).
    auto host = named > 0 && named <= 0x3fffffff ? host_pid(p, static_cast<pid_t>(named))
                                                 : fail(error_code::no_such_process, "");
    const std::int64_t pid = host ? *host : -1;
    // While a process has the pid, only the dumps of that very process (its start time): an earlier
    // process's, or a dump someone claims with another start time, is not its dump.
    auto running = host ? attach::read_process_info(*host) : std::unexpected(host.error());
    // A dump someone adopted for a pid that nothing verified (claimed_pid) is found by that pid only
    // by its owner, who said so: to anyone else it is not that JVM's.
    for (entry_metadata& m : store_.entries())
        if (m.has_report && may_access(p, m.owner_uid) &&
            ((m.pid == pid && (!running || m.jvm_start_time == running->start_time)) ||
             (m.claimed_pid == pid && m.owner_uid == p.uid && !running)))
            out.push_back(std::move(m));
    return out;
}

std::optional<entry_metadata> request_handler::previous_dump(const entry_metadata& m, const peer_credentials& p) const {
    for (entry_metadata& e : store_.entries())  // newest first
        if (e.id != m.id && e.created_ms <= m.created_ms && same_jvm(e, m) && e.has_report &&
            may_access(p, e.owner_uid))
            return std::move(e);
    return std::nullopt;
}

std::optional<wire::json> request_handler::growth_since_previous(const entry_metadata& m, const analysis_report& after,
                                                                 const peer_credentials& p) const {
    auto previous = previous_dump(m, p);
    if (!previous) return std::nullopt;
    auto before = store_.load_report(previous->id);
    if (!before) return std::nullopt;
    return wire::json{{"previous", to_json(*previous)}, {"diff", to_json(diff_analyses(*before, after, growth_rows))}};
}

std::vector<history_point> request_handler::history_of(const entry_metadata& m, const analysis_report& report,
                                                       const peer_credentials& p) const {
    std::vector<history_point> points;  // newest first while collected
    points.push_back(history_point_of(report, m.id, m.created_ms, m.trigger));
    for (const entry_metadata& e : store_.entries()) {  // newest first
        if (points.size() == max_history_points) break;
        if (e.id == m.id || e.created_ms > m.created_ms || !same_jvm(e, m) || !e.has_report ||
            !may_access(p, e.owner_uid))
            continue;
        if (auto earlier = store_.load_report(e.id))
            points.push_back(history_point_of(*earlier, e.id, e.created_ms, e.trigger));
    }
    return {points.rbegin(), points.rend()};
}

void request_handler::add_report_context(wire::json& result, const entry_metadata& m, const analysis_report& report,
                                         const peer_credentials& p, bool history) const {
    if (auto growth = growth_since_previous(m, report, p)) result["growth"] = std::move(*growth);
    if (history) result["history"] = to_json(history_of(m, report, p));
}

void request_handler::diff(const wire::request& r, const connection_ptr& c) {
    auto pid = wire::arg_uint(r.args, "pid", 0);
    auto before_id = wire::arg_string(r.args, "before", "");
    auto after_id = wire::arg_string(r.args, "after", "");
    auto top = wire::arg_uint(r.args, "top", 20);
    if (!pid || !before_id || !after_id || !top)
        return send_error(c, r.id, error_kind::bad_request, "diff: pid, before, after or top is mistyped");
    const peer_credentials& peer = c->peer();
    std::optional<entry_metadata> before, after;
    if (*pid != 0) {
        // The JVM's latest dump and the one before it (of the same JVM, not of an earlier one with its pid).
        auto dumps = dumps_of(static_cast<std::int64_t>(*pid), peer);
        if (!dumps.empty()) {
            after = dumps.front();
            before = previous_dump(*after, peer);
        }
        if (!before)
            return send_error(c, r.id, error_kind::not_found,
                              "pid " + std::to_string(*pid) + " has " + (dumps.empty() ? "no dump" : "only one dump") +
                                  " to compare; take another with heapctl dump " + std::to_string(*pid));
    } else {
        for (auto [id, meta] : {std::pair{&*before_id, &before}, std::pair{&*after_id, &after}}) {
            *meta = valid_entry_id(*id) ? store_.find(*id) : std::nullopt;
            if (!*meta) return send_error(c, r.id, error_kind::not_found, "no dump \"" + *id + "\"");
            if (!may_access(peer, (*meta)->owner_uid))
                return send_error(c, r.id, error_kind::permission_denied, "dump " + *id + " belongs to another user");
        }
    }
    auto old_report = store_.load_report(before->id);
    auto new_report = old_report ? store_.load_report(after->id) : std::unexpected(old_report.error());
    if (!new_report) return send_error(c, r.id, wire::kind_of(new_report.error().code), new_report.error().message);
    diff_report d =
        diff_analyses(*old_report, *new_report, static_cast<unsigned>(std::min<std::uint64_t>(*top, 1u << 30)));
    c->send(wire::make_result(r.id, {{"before", to_json(*before)}, {"after", to_json(*after)}, {"diff", to_json(d)}}));
}

void request_handler::path(const wire::request& r, const connection_ptr& c) {
    auto pid = wire::arg_uint(r.args, "pid", 0);
    auto id = wire::arg_string(r.args, "dump", "");
    auto object = wire::arg_uint(r.args, "object", std::nullopt);
    auto roots = wire::arg_uint(r.args, "roots", 1);
    auto wait = wire::arg_bool(r.args, "wait", true);
    if (!pid || !id || !object || !roots || !wait)
        return send_error(c, r.id, error_kind::bad_request,
                          "path: pid, dump, object, roots or wait is missing or mistyped");
    if (*roots < 1 || *roots > 1000) return send_error(c, r.id, error_kind::bad_request, "path: roots is 1 to 1000");
    const peer_credentials& peer = c->peer();
    if (*pid != 0) {
        auto dumps = dumps_of(static_cast<std::int64_t>(*pid), peer);
        if (dumps.empty()) return send_error(c, r.id, error_kind::not_found, "no dump of pid " + std::to_string(*pid));
        *id = dumps.front().id;
    }
    auto meta = valid_entry_id(*id) ? store_.find(*id) : std::nullopt;
    if (!meta) return send_error(c, r.id, error_kind::not_found, "no dump \"" + *id + "\"");
    if (!may_access(peer, meta->owner_uid))
        return send_error(c, r.id, error_kind::permission_denied, "dump " + *id + " belongs to another user");
    if (!meta->has_dump)
        return send_error(c, r.id, error_kind::not_found,
                          "dump " + *id +
                              " keeps no dump file (a client's file was analyzed in place): use "
                              "heapd path FILE OBJECT_ID on that file");
    const unsigned n = static_cast<unsigned>(*roots);
    const std::string file = path_file_name(*object, n);
    // Asked before: the answer is kept in the entry.
    if (auto kept = store_.get_file(*id, file, max_paths_bytes)) {
        auto j = wire::json::parse(*kept, nullptr, false);
        if (!j.is_discarded())
            return c->send(wire::make_result(r.id, {{"dump", to_json(*meta)}, {"paths", std::move(j)}}));
    }
    if (auto full = queue_full(peer.uid)) return send_error(c, r.id, error_kind::busy, *full);
    const std::string object_text = hex_id(*object);
    job_record spec;
    spec.kind = "path";
    spec.owner_uid = peer.uid;
    spec.owner_gid = peer.gid;
    spec.client_pid = peer.pid;
    spec.jvm_pid = static_cast<pid_t>(meta->pid);
    spec.trigger = "heapctl path";
    spec.subject = std::string("object ") + object_text + " of dump " + *id;
    spec.subject_bytes = meta->file_bytes;
    job_listener listener;
    if (*wait) {
        std::weak_ptr<connection> weak = c;
        listener = [this, weak, request_id = r.id, file](const job_record& job) {
            auto conn = weak.lock();
            if (!conn || !conn->open()) return;
            if (!job.final()) {
                if (job.state == job_state::running && !job.phase.empty())
                    conn->send(wire::make_progress(request_id, {job.id, job.phase, job.done, job.total}));
                return;
            }
            if (job.state != job_state::done) return job_ended(job, request_id, 0, false, conn);
            auto m = store_.find(job.entry);
            auto kept = store_.get_file(job.entry, file, max_paths_bytes);
            auto j = kept ? wire::json::parse(*kept, nullptr, false) : wire::json();
            if (!m || !kept || j.is_discarded())
                return send_error(conn, request_id, error_kind::internal,
                                  "the answer of job " + std::to_string(job.id) + " is gone");
            conn->send(wire::make_result(
                request_id, {{"job", to_json(job, now_ms())}, {"dump", to_json(*m)}, {"paths", std::move(j)}}));
        };
    }
    job_record job = jobs_.submit(spec, make_path_work(store_, {*id, *object, n}), std::move(listener));
    log_->info("path to {} in dump {} asked by uid {}: job {}", object_text, *id, peer.uid, job.id);
    if (!*wait) c->send(wire::make_result(r.id, {{"job", to_json(job, now_ms())}}));
}

}  // namespace heapd::daemon
