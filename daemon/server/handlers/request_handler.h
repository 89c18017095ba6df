#pragma once
// Answers requests: status, jobs, analyze, report, dumps, rm, cancel, dump, jvms, diff, path, metrics,
// sites. Runs on the io_context thread and never blocks on analysis work, which goes to the job
// manager's workers. Who may do what is decided here from the connection's peer credentials (peer.h).
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <spdlog/logger.h>
#include <boost/asio/thread_pool.hpp>

#include "daemon/deaths/death_store.h"
#include "daemon/jobs/dump_job.h"
#include "daemon/jobs/job_manager.h"
#include "daemon/oom/dump_collector.h"
#include "daemon/oom/oom_armer.h"
#include "daemon/oom/oom_intake.h"
#include "daemon/rules/rule_watcher.h"
#include "daemon/server/connection.h"
#include "daemon/store/store.h"
#include "formats/report/history.h"
#include "formats/report/report.h"
#include "formats/wire/error_kinds.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {

class metrics_service;

// Facts about the running daemon that status reports.
struct daemon_info {
    std::string version;
    std::string socket_path;
    std::string host;
    std::int64_t started_ms = 0;
    pid_t pid = 0;
    std::size_t max_queued = 32;       // jobs waiting at once; more are refused as busy (queue_full)
    std::optional<gid_t> admin_group;  // the heapd group, when it exists
};

// Places in the job queue beyond daemon_info::max_queued: for root's requests (no other user's
// jobs take them), and beyond those for OOM requests (which wait for a place, never dropped).
inline constexpr std::size_t root_queue_reserve = 8;
inline constexpr std::size_t oom_queue_reserve = 64;

// A dump request's arguments, as a client's request or the daemon's own rule gives them.
struct dump_args {
    std::uint64_t pid = 0;
    bool live = true;
    std::string trigger;              // request or oom
    std::string oom_kind, oom_error;  // oom: the kind heapd's agent saw, and its words on the error
    bool in_oom_hook = false;
    std::string dump_path;  // of an adopted file, as the caller names it
    std::string jvm, command;
    std::uint64_t start_time = 0;  // 0: not said
    bool snapshot = false;
};

// A dump request's arguments, read and checked (dump_requests.cpp).
wire::wire_result<dump_args> read_dump_args(const wire::json& args);

// Dispatches each request to its handler.
class request_handler {
public:
    request_handler(daemon_info info, store& s, job_manager& jobs, std::shared_ptr<spdlog::logger> log);
    void handle(const wire::request& request, const connection_ptr& c);
    // oom_requests.cpp: the OOM intake (oom_intake.h) and what it held when the daemon started:
    // started again by resume_oom() once the daemon serves.
    void set_oom_intake(oom_intake intake, std::vector<intake_record> held);
    void resume_oom();
    // Takes the dump requests spooled by hooks (spool.h) into the OOM intake and starts them; log
    // lines only. Each file stays in the spool until the intake holds its request; the number of
    // requests left there (the intake full) is returned.
    std::size_t take_spooled(const std::string& spool_dir);
    // A dump the daemon collected from a JVM without heapd's hook (dump_collector.h): kept in the
    // OOM intake and started as a hook's request is (io_context thread).
    void oom_collected(collected_dump d);
    // Starts the OOM requests of the intake that waited (a full queue, a dump of the same JVM under
    // way, a failure to try again); the server calls it every few seconds.
    void retry_oom();
    // rule_dumps.cpp: queues a dump of pid, as root, for the dump rule named rule (trigger
    // "rule:NAME"); the process must still be the one that started at start_time (clock ticks since
    // boot). Busy when a dump of that JVM is under way or too many jobs wait.
    result<job_record> dump_for_rule(pid_t pid, std::uint64_t start_time, const std::string& rule, bool live);
    // The agent library sites requests load (empty: find_agent_library's default).
    void set_agent_library(std::string path) { agent_library_ = std::move(path); }
    // sites_requests.cpp: has heapd's agent sample the JVM's allocations for a sampling rule (as
    // root), on the samplers' pool: "" when that is queued (the outcome is logged), busy when a
    // sites command to the JVM is under way.
    result<std::string> sample_for_rule(pid_t pid, std::uint64_t start_time, const dump_rule& rule);
    // Where metrics requests get their snapshots (none: they are refused).
    void set_metrics(metrics_service* m) { metrics_ = m; }
    // The arming of JVMs for their OutOfMemoryError, shown by `jvms`; it outlives the handler's use.
    void set_armer(const oom_armer* a) { armer_ = a; }
    // The JVMs' heap outlooks for `jvms` (rule_watcher.h).
    void set_watcher(const rule_watcher* w) { watcher_ = w; }
    // The records of JVMs' deaths for `deaths` (none: the list is empty).
    void set_deaths(const death_log* d) { deaths_ = d; }

private:
    void status(const wire::request& r, const connection_ptr& c);
    void jobs(const wire::request& r, const connection_ptr& c);
    void analyze(const wire::request& r, const connection_ptr& c);
    void report(const wire::request& r, const connection_ptr& c);
    void dumps(const wire::request& r, const connection_ptr& c);
    // death_requests.cpp: the kept records of JVMs that died while watched.
    void deaths(const wire::request& r, const connection_ptr& c);
    void remove(const wire::request& r, const connection_ptr& c);
    void cancel(const wire::request& r, const connection_ptr& c);
    // dump_requests.cpp: a JVM's heap dumped (or its own OOM dump adopted) and analyzed; the JVMs.
    void dump(const wire::request& r, const connection_ptr& c);
    void jvms(const wire::request& r, const connection_ptr& c);
    // sites_requests.cpp: heapd's allocation-sampling agent in a JVM the peer may dump.
    void sites(const wire::request& r, const connection_ptr& c);
    // memory_requests.cpp: where the memory of a JVM the peer may dump goes.
    void memory(const wire::request& r, const connection_ptr& c);
    // A JVM a peer may act on as it may dump it: its host pid, owner and start time, and its name in
    // messages.
    struct peer_jvm {
        pid_t pid = 0;
        uid_t owner = 0;
        std::uint64_t start_time = 0;
        std::string who;  // "pid 4242"
    };
    // The JVM the peer names by that pid (host_pid in peer.h), when the peer may dump it. Errors:
    // finding it (no_such_process, not_a_jvm, ...), permission_denied for another user's JVM.
    static result<peer_jvm> jvm_for_peer(std::uint64_t named, const peer_credentials& p);
    // query_requests.cpp: questions about stored dumps.
    void diff(const wire::request& r, const connection_ptr& c);
    void path(const wire::request& r, const connection_ptr& c);
    // Dumps (with reports) of the JVM the peer names by this pid (host_pid in peer.h) that the peer
    // may see, newest first.
    std::vector<entry_metadata> dumps_of(std::int64_t pid, const peer_credentials& p) const;
    // The dump of the same JVM taken before m (same pid and process start time), if the peer may see one.
    std::optional<entry_metadata> previous_dump(const entry_metadata& m, const peer_credentials& p) const;
    // {previous, diff}: what grew from the previous dump of the same JVM to this one (after).
    std::optional<wire::json> growth_since_previous(const entry_metadata& m, const analysis_report& after,
                                                    const peer_credentials& p) const;
    // The dumps of m's JVM with reports the peer may see, oldest first, m last (at most
    // max_history_points, the latest), as the HTML report charts them.
    std::vector<history_point> history_of(const entry_metadata& m, const analysis_report& report,
                                          const peer_credentials& p) const;
    // What a report's reply carries beside the report: growth since the previous dump and, when
    // asked, the JVM's history.
    void add_report_context(wire::json& result, const entry_metadata& m, const analysis_report& report,
                            const peer_credentials& p, bool history) const;
    // metrics_request.cpp: the Prometheus text of what the peer may see.
    void metrics(const wire::request& r, const connection_ptr& c);
    // A dump request's arguments checked against what the peer may do; fd: the dump to adopt.
    result<dump_request> prepare_dump(const dump_args& a, const peer_credentials& p, std::optional<unique_fd> fd);
    // Why a job asked for by requester cannot wait in the queue now, or nothing. The users other
    // than root have max_queued places, of which each may take a quarter; root has root_queue_reserve
    // more that none of theirs take; an OOM request (oom) oom_queue_reserve more than that.
    std::optional<std::string> queue_full(uid_t requester, bool oom = false) const;
    // Queues a prepared dump (one through attach per JVM at a time); busy when one runs or
    // queue_full says so.
    result<job_record> submit_dump(dump_request d, const peer_credentials& p, job_listener waiting, bool oom = false);
    // oom_requests.cpp: a hook's request over the socket, kept in the intake before it is
    // acknowledged (a request the intake holds already, from the spool, is acknowledged alone).
    void oom_from_hook(const wire::request& r, const connection_ptr& c, std::optional<unique_fd> fd,
                       job_listener waiting);
    // Starts a job for a request of the intake (its dump opened from its path when fd has none):
    // the job's record; nothing when it cannot start now and waits in pending_oom_; an error when
    // it never can (the request dropped, and why logged).
    result<std::optional<job_record>> start_oom(intake_record rec, std::optional<unique_fd> fd, job_listener waiting);
    // A job of the intake ended: its request is done with (the entry kept, or cancelled by a user),
    // waits to be tried again (a failure, up to max_oom_attempts), or stays for the next start (the
    // daemon stops).
    void oom_job_ended(const intake_record& rec, const job_record& job);
    // The request is done with (why: when given up, logged): its record goes.
    void finish_oom(const intake_record& rec, const std::string& why);
    // A listener that sends progress, then the report (or the error) once the job has ended.
    job_listener waiting_listener(std::uint64_t request_id, std::uint64_t top, bool history, const connection_ptr& c);
    // The final reply to a waiting analyze request, once its job has ended.
    void job_ended(const job_record& job, std::uint64_t request_id, unsigned top, bool history,
                   const connection_ptr& c);

    daemon_info info_;
    store& store_;
    job_manager& jobs_;
    std::shared_ptr<spdlog::logger> log_;
    std::set<pid_t> dumping_;  // JVMs with a dump job through attach queued or running (io_context thread only)
    // The OOM intake and its requests waiting to start (io_context thread only).
    std::optional<oom_intake> intake_;
    struct pending_oom {
        intake_record rec;
        std::chrono::steady_clock::time_point not_before;
        std::string why;  // what it waits for
    };
    std::map<std::string, pending_oom> pending_oom_;
    // The dump each request's hook passed (or that was opened from its path), held by request until
    // the request is done with, so that one that waits or is tried again still has it when its
    // path is gone (a container removed at its JVM's exit); at most max_held_oom_dumps.
    std::map<std::string, unique_fd> oom_dumps_;
    std::set<std::string> spool_refused_;  // spool files the intake had no room for, said once
    metrics_service* metrics_ = nullptr;
    const oom_armer* armer_ = nullptr;
    const rule_watcher* watcher_ = nullptr;
    const death_log* deaths_ = nullptr;
    // Where stored reports are read and parsed (up to a gigabyte of JSON) and JVMs listed, off the
    // io thread, so that status, jobs and every other client are answered meanwhile. Replies go
    // back through connection::send, which hands them to the io thread. Destroyed (joined) first.
    boost::asio::thread_pool readers_{2};
    // Where sites requests attach to JVMs (each up to its timeout, however slowly the JVM answers),
    // apart from the readers. A JVM takes one sites command at a time, and the JVMs of one user at
    // most half the pool's threads (sampling_busy_, sampling_by_owner_, shared with those threads),
    // so one user's slow or fake JVMs never hold every thread.
    bool claim_sampler(pid_t pid, uid_t owner, std::string& why);
    void release_sampler(pid_t pid, uid_t owner);
    static constexpr unsigned sampler_threads = 4;
    std::string agent_library_;
    std::mutex sampling_mutex_;
    std::set<pid_t> sampling_busy_;
    std::map<uid_t, unsigned> sampling_by_owner_;
    boost::asio::thread_pool samplers_{sampler_threads};
};

// The report as sent to clients: the histogram cut to top rows (0: all), the other top lists to
// top (20 when top is 0), as `heapd analyze` prints them.
wire::json report_for_client(analysis_report report, unsigned top);

// Replies to request id with an error of that kind (the handlers' one way of refusing).
void send_error(const connection_ptr& c, std::uint64_t id, wire::error_kind kind, std::string message);

}  // namespace heapd::daemon
