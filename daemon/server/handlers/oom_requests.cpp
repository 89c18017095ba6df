// The request handler's OutOfMemoryError requests (request_handler.h): a hook's over the socket and
// the spooled ones. Each is kept in the OOM intake (oom_intake.h) from the moment the daemon has it
// until its entry is kept, started again after any stop, and never refused for good for coming at a
// bad time: a full queue or a dump of the same JVM under way only makes it wait, and a failure is
// tried again. The dump the JVM wrote stays where it lies until then; heapd's armed file is removed
// only once its entry is kept.
#include <fcntl.h>
#include <sys/stat.h>

#include "attach/owner_files.h"
#include "attach/process_info.h"
#include "attach/process_namespaces.h"
#include "daemon/oom/arm_jvm.h"
#include "daemon/oom/spool.h"
#include "daemon/runtime/log_text.h"
#include "daemon/server/handlers/request_handler.h"
#include "formats/wire/error_kinds.h"

namespace heapd::daemon {
namespace {

using wire::error_kind;
using steady = std::chrono::steady_clock;

// Jobs started for one request before it is given up, and the pause before the next.
constexpr unsigned max_oom_attempts = 3;
constexpr auto oom_retry_pause = std::chrono::seconds(20);
// Dumps of OOM requests held open at once (request_handler::oom_dumps_): beyond them a request
// reopens its dump by path when it starts again.
constexpr std::size_t max_held_oom_dumps = 64;

// Who wrote a request: who asks for its dump. An admin by uid alone (root) or by the group; a hook
// in a container names the JVM by its pid there. A dump the daemon collected is the JVM user's,
// attributed to that JVM on the daemon's word (as an admin's).
peer_credentials writer_of(const intake_record& r, std::optional<gid_t> admin_group) {
    peer_credentials p;
    p.uid = r.writer_uid;
    p.gid = r.writer_gid;
    p.admin = r.collected || r.writer_uid == 0 || (admin_group && r.writer_gid == *admin_group);
    if (auto ns = r.args.find("pid_ns"); ns != r.args.end() && ns->is_number_unsigned())
        p.pid_ns = attach::pid_namespace{ns->get<std::uint64_t>(), -1};
    return p;
}

std::string pid_of(const intake_record& r) { return std::to_string(r.args.value("pid", std::int64_t{0})); }

// The path of a request's dump as the daemon reaches it: as written, or for a hook in another
// mount namespace (a container), through /proc/PID/root of a process still in it (the JVM first).
// Empty when there is none, or it cannot be reached (said in problems).
std::string intake_dump_path(const intake_record& r, const peer_credentials& p, std::vector<std::string>& problems) {
    const std::string path = r.args.value("dump_path", std::string());
    auto mnt = r.args.find("mnt_ns");
    auto own = attach::mount_namespace_of(0);
    if (path.empty() || mnt == r.args.end() || !mnt->is_number_unsigned() || !own || *own == mnt->get<std::uint64_t>())
        return path;
    const std::uint64_t theirs = mnt->get<std::uint64_t>();
    auto jvm = host_pid(p, static_cast<pid_t>(r.args.value("pid", std::int64_t{0})));
    auto jvm_ns = jvm ? attach::mount_namespace_of(*jvm) : std::unexpected(jvm.error());
    auto holder = jvm_ns && *jvm_ns == theirs ? *jvm : attach::process_in_mount_namespace(theirs);
    if (!holder || !path.starts_with('/')) {
        problems.push_back("the JVM's dump " + path + " was in a container that is gone");
        return {};
    }
    return attach::proc_path(*holder, "root") + path;
}

// Whether a dump lies at heapd's own armed name (arm_jvm.h): heapd's to remove once its entry is
// kept, so no heap-sized file is left behind in the JVM's /tmp.
bool at_armed_name(const std::string& path, const wire::json& args) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return false;
    const auto ns_pid = static_cast<pid_t>(args.value("pid", std::int64_t{0}));
    const std::uint64_t start_time = args.value("start_time", std::uint64_t{0});
    return start_time != 0 && is_armed_dump_name(path.substr(slash + 1), ns_pid, start_time);
}

// The request's dump opened as its writer, never with heapd's rights: the path is theirs to name,
// and only a regular file they own (or any, for an admin) is taken. Nothing when it names none.
std::optional<unique_fd> open_intake_dump(const intake_record& r, const peer_credentials& p,
                                          std::vector<std::string>& problems) {
    const std::string path = intake_dump_path(r, p, problems);
    if (path.empty()) return std::nullopt;
    auto opened = attach::open_as_owner(path, p.uid, p.gid, false);
    struct stat st {};
    if (opened && ::fstat(opened->get(), &st) == 0 && ((p.admin && !r.collected) || st.st_uid == p.uid))
        return std::move(*opened);
    problems.push_back("the JVM's dump " + path + " cannot be adopted for uid " + std::to_string(p.uid) + " (" +
                       (opened ? "owned by uid " + std::to_string(st.st_uid) : opened.error().message) +
                       "); dumping the JVM if it still runs");
    return std::nullopt;
}

// Removes heapd's armed file of a request whose entry is kept, as its writer, when its name still
// leads to the dump taken; the path removed, or "".
std::string remove_armed_dump(const intake_record& rec, std::optional<gid_t> admin_group) {
    const peer_credentials p = writer_of(rec, admin_group);
    std::vector<std::string> problems;
    const std::string path = intake_dump_path(rec, p, problems);
    if (path.empty() || !at_armed_name(path, rec.args) || rec.dump_ino == 0) return {};
    return attach::remove_path_as_owner(path, p.uid, p.gid, rec.dump_dev, rec.dump_ino) ? path : std::string();
}

}  // namespace

void request_handler::set_oom_intake(oom_intake intake, std::vector<intake_record> held) {
    intake_ = std::move(intake);
    for (intake_record& r : held) {
        const std::string key = r.key;
        pending_oom_[key] = {std::move(r), steady::time_point{}, "the daemon's start"};
    }
}

void request_handler::resume_oom() {
    if (!pending_oom_.empty())
        log_->info("OOM intake: {} request(s) taken before the last stop are started again", pending_oom_.size());
    retry_oom();
}

void request_handler::retry_oom() {
    const auto now = steady::now();
    std::vector<intake_record> due;
    for (auto it = pending_oom_.begin(); it != pending_oom_.end();) {
        if (it->second.not_before > now) {
            ++it;
            continue;
        }
        due.push_back(std::move(it->second.rec));
        it = pending_oom_.erase(it);
    }
    for (intake_record& rec : due) (void)start_oom(std::move(rec), std::nullopt, {});
}

result<std::optional<job_record>> request_handler::start_oom(intake_record rec, std::optional<unique_fd> fd,
                                                             job_listener waiting) {
    // The dump held for the request first: a request that waits or fails lets go of fd, not of it.
    auto hold = [&] {
        if (!fd || oom_dumps_.contains(rec.key) || oom_dumps_.size() >= max_held_oom_dumps) return;
        if (unique_fd copy(::fcntl(fd->get(), F_DUPFD_CLOEXEC, 0)); copy) oom_dumps_.emplace(rec.key, std::move(copy));
    };
    hold();
    auto wait = [&](std::string why, steady::duration pause) -> result<std::optional<job_record>> {
        auto& slot = pending_oom_[rec.key];
        if (slot.why != why) log_->info("OOM request {} of pid {} waits: {}", rec.key, pid_of(rec), bounded_text(why));
        slot = {std::move(rec), steady::now() + pause, std::move(why)};
        return std::nullopt;
    };
    // Cheap checks first: a request that waits is not opened again at every try.
    if (auto full = queue_full(0, true)) return wait(*full, {});
    // Kept already: the daemon stopped after the entry was committed and before the record went.
    for (const entry_metadata& e : store_.entries())
        if (e.oom_request == rec.key) {
            if (auto removed = remove_armed_dump(rec, info_.admin_group); !removed.empty())
                log_->info("OOM request {}: kept as {} before the last stop; removed {}", rec.key, e.id,
                           bounded_text(removed));
            finish_oom(rec, "");
            return std::nullopt;
        }
    const peer_credentials p = writer_of(rec, info_.admin_group);
    std::vector<std::string> problems;
    if (auto held = oom_dumps_.find(rec.key); !fd && held != oom_dumps_.end())
        if (unique_fd copy(::fcntl(held->second.get(), F_DUPFD_CLOEXEC, 0)); copy) fd = std::move(copy);
    if (!fd && !rec.args.value("dump_path", std::string()).empty()) fd = open_intake_dump(rec, p, problems);
    hold();
    for (const std::string& problem : problems)
        log_->warn("OOM request {} of pid {}: {}", rec.key, pid_of(rec), bounded_text(problem));
    struct stat st {};
    if (fd && rec.dump_ino == 0 && ::fstat(fd->get(), &st) == 0) {
        rec.dump_dev = st.st_dev;
        rec.dump_ino = st.st_ino;
    }
    auto a = read_dump_args(rec.args);
    auto d = a ? prepare_dump(*a, p, std::move(fd)) : fail(error_code::bad_value, a.error().message);
    if (!d) {
        finish_oom(rec, d.error().message);
        return std::unexpected(d.error());
    }
    if (!d->adopt && dumping_.contains(d->pid))
        return wait("a dump of pid " + std::to_string(d->pid) + " is under way", std::chrono::seconds(1));
    d->oom_request = rec.key;
    // heapd's armed file goes once the entry is in place, before the job is done.
    d->after_commit = [rec, admin = info_.admin_group] { (void)remove_armed_dump(rec, admin); };
    ++rec.attempts;  // counted before it starts: a request that brings the daemon down is not tried forever
    if (auto kept = intake_->keep(rec); !kept)
        log_->warn("OOM request {}: {}", rec.key, bounded_text(kept.error().message));
    job_listener listener = [this, rec, waiting = std::move(waiting)](const job_record& job) {
        if (waiting) waiting(job);
        if (job.final()) oom_job_ended(rec, job);
    };
    auto job = submit_dump(std::move(*d), p, std::move(listener), true);
    if (!job) {
        --rec.attempts;
        return wait(job.error().message, {});
    }
    return std::optional<job_record>(*job);
}

void request_handler::oom_job_ended(const intake_record& rec, const job_record& job) {
    if (!intake_ || !intake_->contains(rec.key)) return;
    if (job.state == job_state::done) return finish_oom(rec, "");
    if (job.cancelled_by_stop()) return;  // taken up again at the next start
    if (job.state == job_state::cancelled) {
        // A user gave it up: heapd's own heap-sized file in the JVM's /tmp goes too.
        if (auto removed = remove_armed_dump(rec, info_.admin_group); !removed.empty())
            log_->info("OOM request {}: removed {}", rec.key, bounded_text(removed));
        return finish_oom(rec, "its job " + std::to_string(job.id) + " was cancelled");
    }
    intake_record next = rec;
    next.last_error = job.error;
    if (next.attempts >= max_oom_attempts)
        return finish_oom(next,
                          "given up after " + std::to_string(next.attempts) + " attempts, the last: " + job.error);
    if (auto kept = intake_->keep(next); !kept)
        log_->warn("OOM request {}: {}", rec.key, bounded_text(kept.error().message));
    const std::string why = "job " + std::to_string(job.id) + " failed (" + job.error + "); tried again in " +
                            std::to_string(oom_retry_pause.count()) + " s";
    log_->warn("OOM request {} of pid {}: {}", rec.key, pid_of(rec), bounded_text(why));
    pending_oom_[rec.key] = {std::move(next), steady::now() + oom_retry_pause, why};
}

void request_handler::finish_oom(const intake_record& rec, const std::string& why) {
    if (!why.empty()) {
        // A request given up leaves its dump where it is, for someone to look at by hand.
        const std::string path = rec.args.value("dump_path", std::string());
        log_->warn("OOM request {} of pid {}: {}{}", rec.key, pid_of(rec), bounded_text(why),
                   path.empty() ? std::string() : "; the file it names is left as it is: " + bounded_text(path));
    }
    pending_oom_.erase(rec.key);
    oom_dumps_.erase(rec.key);
    if (intake_) intake_->drop(rec.key);
}

void request_handler::oom_from_hook(const wire::request& r, const connection_ptr& c, std::optional<unique_fd> fd,
                                    job_listener waiting) {
    const peer_credentials& peer = c->peer();
    auto id_arg = r.args.find("request_id");
    const std::string id =
        id_arg != r.args.end() && id_arg->is_string() ? id_arg->get<std::string>() : new_request_id();
    auto key = intake_key(peer.uid, id);
    if (!key)
        return send_error(c, r.id, error_kind::bad_request, "dump: request_id is 1 to 48 letters, digits, - or _");
    // Its spooled copy (the hook heard nothing in time and spooled it) was taken first.
    if (intake_->contains(*key)) return c->send(wire::make_result(r.id, {{"taken", "before, from the spool"}}));
    intake_record rec;
    rec.key = *key;
    rec.writer_uid = peer.uid;
    rec.writer_gid = peer.gid;
    rec.args = r.args;
    // The namespace the kernel says the hook is in, not the one it names.
    if (peer.pid_ns)
        rec.args["pid_ns"] = peer.pid_ns->inode;
    else
        rec.args.erase("pid_ns");
    rec.received_ms = now_ms();
    struct stat st {};
    if (fd && ::fstat(fd->get(), &st) == 0) {
        rec.dump_dev = st.st_dev;
        rec.dump_ino = st.st_ino;
    }
    // Kept before it is acknowledged: from here on a crash or a stop does not lose it.
    if (auto kept = intake_->keep(rec); !kept)
        return send_error(c, r.id, wire::kind_of(kept.error().code), kept.error().message);
    const bool waits = static_cast<bool>(waiting);
    auto started = start_oom(std::move(rec), std::move(fd), std::move(waiting));
    if (!started) return send_error(c, r.id, wire::kind_of(started.error().code), started.error().message);
    if (!*started) return c->send(wire::make_result(r.id, {{"taken", "waiting to start"}}));
    if (!waits) c->send(wire::make_result(r.id, {{"job", to_json(**started, now_ms())}}));
}

void request_handler::oom_collected(collected_dump d) {
    const collect_target& t = d.target;
    intake_record rec;
    auto key = intake_key(t.uid, new_request_id());
    if (!key) return;
    rec.key = *key;
    rec.writer_uid = t.uid;
    rec.writer_gid = t.gid;
    // As the JVM's hook would say it: its pid and dump as the JVM sees them, and its namespaces.
    rec.args = {{"pid", t.ns_pid},
                {"pid_ns", t.pid_ns},
                {"mnt_ns", t.mnt_ns},
                {"start_time", t.id.start_time},
                {"trigger", "oom"},
                {"dump_path", d.path},
                {"jvm", t.jvm},
                {"command", t.command},
                {"request_id", rec.key.substr(rec.key.find('-') + 1)}};
    rec.received_ms = now_ms();
    rec.collected = true;
    struct stat st {};
    if (d.file && ::fstat(d.file.get(), &st) == 0) {
        rec.dump_dev = st.st_dev;
        rec.dump_ino = st.st_ino;
    }
    log_->info("OOM: pid {} wrote its dump {} ({} bytes); collected as request {}", t.id.pid, bounded_text(d.path),
               static_cast<std::int64_t>(st.st_size), rec.key);
    if (auto kept = intake_->keep(rec); !kept)
        log_->warn("OOM request {}: {} (taken on all the same, while the daemon runs)", rec.key,
                   bounded_text(kept.error().message));
    std::optional<unique_fd> fd;
    if (d.file) fd = std::move(d.file);
    auto started = start_oom(std::move(rec), std::move(fd), {});
    if (started && *started) log_->info("OOM dump of pid {}: job {}", t.id.pid, (*started)->id);
}

std::size_t request_handler::take_spooled(const std::string& spool_dir) {
    std::vector<std::string> problems;
    std::size_t left = 0;
    std::set<std::string> refused;  // this pass's: each file said once while it stays
    for (spooled_request& s : read_spool(spool_dir, problems)) {
        auto key = intake_key(s.writer_uid, spooled_request_id(s));
        if (!key) {
            problems.push_back(s.path + ": a request id that is no name; removed");
            remove_spooled(s);
            continue;
        }
        if (intake_->contains(*key)) {  // the hook's handover was taken, or an earlier pass took it
            remove_spooled(s);
            continue;
        }
        intake_record rec;
        rec.key = *key;
        rec.writer_uid = s.writer_uid;
        rec.writer_gid = s.writer_gid;
        rec.args = std::move(s.args);
        rec.received_ms = now_ms();
        if (auto kept = intake_->keep(rec); !kept) {
            // Left in the spool for a later pass.
            if (!spool_refused_.contains(s.path))
                log_->warn("spooled request {}: {}", bounded_text(s.path), bounded_text(kept.error().message));
            refused.insert(s.path);
            ++left;
            continue;
        }
        remove_spooled(s);
        auto started = start_oom(std::move(rec), std::nullopt, {});
        if (started && *started)
            log_->info("spooled request {}: job {}", bounded_text(s.path), (*started)->id);
        else if (started)
            log_->info("spooled request {}: kept, waiting to start", bounded_text(s.path));
    }
    spool_refused_ = std::move(refused);
    for (const std::string& p : problems) log_->warn("spool: {}", bounded_text(p));
    return left;
}

}  // namespace heapd::daemon
