#include "daemon/jobs/dump_job.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "attach/agent_control.h"
#include "attach/attach_client.h"
#include "attach/file_copy.h"
#include "attach/heap_dump.h"
#include "attach/process_info.h"
#include "attach/process_snapshot.h"
#include "daemon/jobs/analyze_job.h"
#include "daemon/jobs/staging_journal.h"
#include "daemon/oom/arm_jvm.h"
#include "formats/report/quantities.h"
#include "formats/report/report_json.h"
#include "formats/sites/allocation_profile.h"
#include "formats/sites/sites_join.h"

namespace heapd::daemon {
namespace {

// Waits until the JVM answers an attach again (it has left its OnOutOfMemoryError hook): tries with
// a short timeout, then backs off (0.1 s doubling to 2 s). False with why when it is gone or
// cancelled or the limit passed.
std::optional<error_info> wait_for_jvm(const dump_request& r, job_context& ctx) {
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::milliseconds(oom_wait_limit_ms);
    auto pause = std::chrono::milliseconds(100);
    attach::attach_options options;
    options.timeout = std::chrono::seconds(2);
    options.expected_start_time = r.start_time;
    options.cancelled = [&ctx] { return ctx.cancelled(); };
    std::optional<clock::time_point> stopped_since;
    for (unsigned attempt = 1;; ++attempt) {
        ctx.progress("waiting for the JVM", attempt, 0);
        auto state = attach::read_process_info(r.pid);
        if (state && state->stopped()) {
            if (!stopped_since) stopped_since = clock::now();
            if (clock::now() - *stopped_since >= std::chrono::milliseconds(oom_wait_stopped_ms))
                return error_info{error_code::not_responding,
                                  "pid " + std::to_string(r.pid) + " has been stopped (state " +
                                      std::string(1, state->state) + ") for " +
                                      text::duration_text(oom_wait_stopped_ms) + ": not waited for longer"};
        } else {
            stopped_since.reset();
        }
        // While its hook runs the JVM is at a safepoint: a SIGQUIT now would be handled once it resumes,
        // as a thread dump into its output when the listener cannot start (a full heap, exiting).
        options.may_signal = !oom_hook_running(r.pid);
        auto answer = attach::print_flag(r.pid, "HeapDumpOnOutOfMemoryError", options);
        if (answer) return std::nullopt;
        const auto code = answer.error().code;
        if (code == error_code::no_such_process || code == error_code::not_a_jvm ||
            code == error_code::permission_denied || code == error_code::attach_disabled)
            return error_info{code, "pid " + std::to_string(r.pid) +
                                        " never answered after its OutOfMemoryError hook: " + answer.error().message};
        if (clock::now() >= deadline)
            return error_info{error_code::not_responding, "pid " + std::to_string(r.pid) + " did not answer for " +
                                                              text::duration_text(oom_wait_limit_ms) + ": " +
                                                              answer.error().message};
        for (auto until = clock::now() + pause; clock::now() < until;) {
            if (ctx.cancelled()) return error_info{error_code::cancelled, "cancelled"};
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        pause = std::min(pause * 2, std::chrono::milliseconds(2000));
    }
}

// A file in the store's scratch directory with no name, for a child running as the JVM's user to
// write through /proc/self/fd (mode 0666 on a nameless file: only processes holding it reach it).
result<unique_fd> scratch_file(store& s) {
    unique_fd fd(::open(s.tmp_dir().c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
    if (!fd || ::fchmod(fd.get(), 0666) != 0) return fail_errno("cannot make a scratch file in", s.tmp_dir());
    return fd;
}

// A big scratch file (a core of gigabytes) closed off the job's thread: the kernel waits for the
// writeback of its pages before it frees them, seconds that would hold the job (a cancelled one
// too) for nothing.
struct closed_aside {
    unique_fd fd;
    ~closed_aside() {
        if (fd) std::thread([f = std::move(fd)]() mutable { f.reset(); }).detach();
    }
};

// A snapshot from outside may stand in for a dump through attach when attach cannot work at all
// (disabled, or no answer) and the request named the JVM's executable.
bool snapshot_may_stand_in(error_code code, const dump_request& r) {
    return !r.fallback_exe.empty() && (code == error_code::attach_disabled || code == error_code::not_responding);
}

// The heap of a JVM held in its hook, from outside: a core now, then its conversion to HPROF.
result<unique_fd> snapshot_heap(store& s, const dump_request& r, job_context& ctx) {
    attach::snapshot_target target{r.pid, r.uid, r.gid, r.exe};
    if (!attach::same_filesystem_view(r.pid)) {
        // A JVM in a container: its own JDK, in its namespaces, converts the core.
        auto info = attach::read_process_info(r.pid);
        if (!info) return std::unexpected(info.error());
        target.in_container = true;
        target.ns_pid = info->ns_pid;
        target.start_time = r.start_time.value_or(info->start_time);
    }
    // The container's filesystem, held for the conversion: the JVM (and its container) may be gone then.
    unique_fd container;
    if (target.in_container) {
        auto held = attach::hold_mount_namespace(target);
        if (!held)
            return fail(held.error().code, "snapshot of pid " + std::to_string(r.pid) + ": " + held.error().message);
        container = std::move(*held);
        target.mount_namespace = container.get();
    }
    auto made = scratch_file(s);
    if (!made) return std::unexpected(made.error());
    const closed_aside core{std::move(*made)};
    ctx.progress("snapshot", 0, 0);
    if (auto written = attach::write_core(target, core.fd.get(), std::chrono::seconds(snapshot_limit_s)); !written)
        return fail(written.error().code, "snapshot of pid " + std::to_string(r.pid) + ": " + written.error().message);
    // The JVM may go now: the hook is told by this phase.
    ctx.progress("convert", 0, 0);
    auto hprof = scratch_file(s);
    if (!hprof) return std::unexpected(hprof.error());
    if (auto converted =
            attach::core_to_hprof(target, core.fd.get(), hprof->get(), std::chrono::seconds(conversion_limit_s),
                                  [&ctx] { return ctx.cancelled(); });
        !converted) {
        const closed_aside partial{std::move(*hprof)};
        return fail(converted.error().code,
                    "converting the snapshot of pid " + std::to_string(r.pid) + ": " + converted.error().message);
    }
    return hprof;
}

}  // namespace

// What heapd's agent sampled in the JVM, when it is sampling there, asked right after the dump and
// kept in the entry (sites.json): a live dump's full collection has just cleared the references of
// what was unreachable, so the agent's live objects are the dump's. Nothing when the JVM has no
// agent, is not sampling, or does not answer within a few seconds: the dump is what matters.
std::optional<sites::allocation_profile> sampled_sites(const dump_request& r, store::staged_entry& entry,
                                                       job_context& ctx) {
    auto library = attach::loaded_agent_library(r.pid);
    if (!library) return std::nullopt;
    attach::attach_options options;
    options.timeout = std::chrono::seconds(10);
    options.expected_start_time = r.start_time;
    options.cancelled = [&ctx] { return ctx.cancelled(); };
    auto away = ctx.waiting_outside();
    auto text = attach::agent_command(r.pid, {*library}, "show", sites::agent_protocol, options);
    if (!text) return std::nullopt;
    auto profile = sites::parse_allocation_profile(*text);
    if (!profile || !profile->error.empty() || !profile->has_tables) return std::nullopt;
    if (!entry.write("sites.json", *text)) return std::nullopt;
    return std::move(*profile);
}

// The table a sampling agent wrote when the JVM ran out of heap (after its hook, which handed over
// this dump), kept in the entry like sampled_sites'. The JVM may have exited since: a JVM of the
// host leaves it in /tmp. Waits a few seconds for a JVM that still runs and has not written it yet.
std::optional<sites::allocation_profile> oom_sites(const dump_request& r, store::staged_entry& entry,
                                                   job_context& ctx) {
    if (!r.start_time) return std::nullopt;
    auto away = ctx.waiting_outside();
    auto info = attach::read_process_info(r.pid);
    const bool alive = info && info->start_time == *r.start_time;
    if (alive && !attach::loaded_agent_library(r.pid)) return std::nullopt;
    const pid_t ns_pid = alive ? info->ns_pid : r.pid;
    const bool host_tmp = alive ? attach::same_filesystem_view(r.pid) : true;
    auto text = attach::take_oom_answer(r.pid, ns_pid, *r.start_time, r.uid, r.gid, host_tmp, std::chrono::seconds(5));
    if (!text) return std::nullopt;
    auto profile = sites::parse_allocation_profile(*text);
    if (!profile || !profile->error.empty() || !profile->has_tables) return std::nullopt;
    if (!entry.write("sites.json", *text)) return std::nullopt;
    return std::move(*profile);
}

namespace {

// Before anything is staged: the heap from outside when asked (a JVM held in its hook), the adopted
// file checked, room in the store, and a JVM in its hook waited for.
std::optional<error_info> prepare(store& s, dump_request& r, job_context& ctx) {
    const std::string who = "pid " + std::to_string(r.pid);
    std::string snapshot_problem;  // a snapshot that failed: the JVM is dumped through attach instead
    if (r.snapshot && !r.adopt) {
        if (auto taken = snapshot_heap(s, r, ctx)) {
            r.adopt = std::move(*taken);
            r.adopt_name = "the heap of " + who + " at its OutOfMemoryError (core by gdb, HPROF by jhsdb)";
        } else {
            snapshot_problem = taken.error().message;
        }
    }
    if (r.adopt) {
        struct stat st {};
        if (::fstat(r.adopt->get(), &st) != 0 || !S_ISREG(st.st_mode))
            return error_info{error_code::bad_value, r.adopt_name + " is not a regular file"};
        r.estimate = static_cast<std::uint64_t>(st.st_size);
    }
    if (auto room = s.ensure_space(r.estimate, "the heap dump of " + who); !room) return room.error();
    if (!r.adopt && r.wait_for_jvm) {
        auto away = ctx.waiting_outside();  // a JVM in its hook: minutes, maybe
        if (auto gone = wait_for_jvm(r, ctx)) {
            if (!snapshot_problem.empty()) gone->message += "; before that, the " + snapshot_problem;
            return gone;
        }
    }
    if (ctx.cancelled()) return error_info{error_code::cancelled, "cancelled"};
    return std::nullopt;
}

// The store entry's facts of this dump.
entry_metadata dump_metadata(const dump_request& r, const job_context& ctx) {
    entry_metadata meta;
    meta.created_ms = now_ms();
    meta.owner_uid = r.uid;
    meta.owner_gid = r.gid;
    meta.trigger = r.trigger;
    meta.oom_kind = r.oom_kind;
    meta.oom_error = r.oom_error;
    meta.source = "dump";
    meta.file = r.adopt ? r.adopt_name : "heap of pid " + std::to_string(r.pid);
    meta.host = r.host;
    meta.pid = r.claimed ? 0 : r.pid;
    meta.claimed_pid = r.claimed ? r.pid : 0;
    meta.jvm_start_time = r.claimed ? 0 : r.start_time.value_or(0);
    meta.jvm = r.jvm;
    meta.command_line = r.command_line;
    if (!r.claimed) meta.container = r.container;
    meta.job = ctx.id();
    meta.oom_request = r.oom_request;
    return meta;
}

// A JVM that cannot answer attach: its heap from outside, as for a JVM held in its OOM hook, copied
// to path.
std::optional<error_info> dump_from_outside(store& s, dump_request& r, store::staged_entry& staged,
                                            const std::string& path, const error_info& attach_error, job_context& ctx) {
    const std::string who = "pid " + std::to_string(r.pid);
    r.exe = r.fallback_exe;
    auto taken = snapshot_heap(s, r, ctx);
    if (!taken && taken.error().code == error_code::cancelled) return taken.error();
    if (!taken)
        return error_info{attach_error.code,
                          attach_error.message + "; the snapshot instead failed too: " + taken.error().message};
    struct stat st {};
    const auto size = ::fstat(taken->get(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
    if (auto fits = s.ensure_space(size, "the heap dump of " + who); !fits) return fits.error();
    ctx.progress("dump", 0, size);
    if (auto copied = attach::copy_to_new_file(taken->get(), size, path); !copied) return copied.error();
    staged.metadata().file =
        "heap of " + who + " (attach failed: " + attach_error.message + "; core by gdb, HPROF by jhsdb)";
    return std::nullopt;
}

// The JVM writes its heap through attach into its /tmp, copied to path (or, when it cannot answer,
// from outside); what heapd's agent sampled there, if it samples.
result<std::optional<sites::allocation_profile>> dump_through_attach(store& s, dump_request& r,
                                                                     store::staged_entry& staged,
                                                                     const std::string& path, job_context& ctx) {
    const std::string who = "pid " + std::to_string(r.pid);
    attach::attach_options options;
    options.timeout = std::chrono::seconds(120);  // of silence: a growing file is an answer
    options.limit = std::chrono::milliseconds(dump_conversation_limit_ms);
    options.expected_start_time = r.start_time;
    options.cancelled = [&ctx] { return ctx.cancelled(); };
    // A dump staged in the JVM's /tmp is copied only when it fits (a sparse file would not).
    auto room = s.space_left();
    if (!room || *room == 0)
        return room ? fail(error_code::no_space, "no space left in the store for the heap dump of " + who)
                    : std::unexpected(room.error());
    // The staged file's name is noted in the store until the dump is over: a daemon killed with its
    // attach helper meanwhile removes it at its next start.
    const staging_journal journal(s.staging_dir(), s.options().access);
    attach::dump_options dump{r.live, 0, *room, [&](const std::string& name) {
                                  const bool host_tmp = attach::same_filesystem_view(r.pid);
                                  (void)journal.note(ctx.id(), {r.pid, r.start_time.value_or(0), host_tmp, name});
                              }};
    auto dumped = [&] {
        auto away = ctx.waiting_outside();  // the JVM writes; heapd only waits
        return attach::dump_heap(r.pid, path, dump, options);
    }();
    journal.done(ctx.id());
    if (!dumped && dumped.error().code == error_code::cancelled) return fail(error_code::cancelled, "cancelled");
    if (!dumped && snapshot_may_stand_in(dumped.error().code, r)) {
        if (auto failed = dump_from_outside(s, r, staged, path, dumped.error(), ctx)) return std::unexpected(*failed);
        return std::nullopt;
    }
    if (!dumped) return std::unexpected(dumped.error());
    if (!dumped->written) return fail(error_code::jvm_refused, who + " wrote no dump: " + dumped->reply.output);
    return sampled_sites(r, staged, ctx);
}

// The dump at path analyzed, joined with its allocation sites when there are some, and the entry
// committed: the entry's id.
job_outcome analyze_and_commit(store& s, const dump_request& r, store::staged_entry& staged, const std::string& path,
                               const std::optional<sites::allocation_profile>& profile, job_context& ctx) {
    if (auto a = apply_access(path, false, s.options().access); !a) return std::unexpected(a.error());
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return fail_errno("cannot open", path);
    struct stat st {};
    // analyze_for_job raises it to the inflated size of a compressed dump
    std::uint64_t total = ::fstat(fd.get(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
    staged.metadata().file_bytes = total;
    auto analyzed = analyze_for_job(ctx, s, fd.get(), staged.metadata().file, total, r.executable);
    fd.reset();
    if (!analyzed) return std::unexpected(analyzed.error());
    if (ctx.cancelled()) return fail(error_code::cancelled, "cancelled");
    if (profile) {
        sites::join_allocation_sites(analyzed->report, *profile);
        analyzed->json = to_json(analyzed->report).dump();
    }
    ctx.progress("save", total, total);
    staged.metadata().headline = report_headline(analyzed->report);
    if (auto w = staged.write("report.json", analyzed->json); !w) return std::unexpected(w.error());
    auto committed = staged.commit();
    if (!committed) return std::unexpected(committed.error());
    s.report_committed(*committed, analyzed->report);
    if (r.after_commit) r.after_commit();
    return committed->id;
}

}  // namespace

job_work make_dump_work(store& s, dump_request request) {
    auto req = std::make_shared<dump_request>(std::move(request));
    return [&s, req](job_context& ctx) -> job_outcome {
        ctx.progress("prepare", 0, req->estimate);
        if (auto refused = prepare(s, *req, ctx)) return std::unexpected(*refused);
        auto staged = s.stage(dump_metadata(*req, ctx));
        if (!staged) return std::unexpected(staged.error());
        const std::string path = staged->path("dump.hprof");
        ctx.progress("dump", 0, req->estimate);
        std::optional<sites::allocation_profile> profile;
        if (req->adopt) {
            // The size checked against the space guard bounds the copy (a file that grows does not).
            if (auto copied = attach::copy_to_new_file(req->adopt->get(), req->estimate, path); !copied)
                return std::unexpected(copied.error());
            req->adopt.reset();
            if (req->trigger == "oom" && !req->claimed) profile = oom_sites(*req, *staged, ctx);
        } else {
            auto dumped = dump_through_attach(s, *req, *staged, path, ctx);
            if (!dumped) return std::unexpected(dumped.error());
            profile = std::move(*dumped);
        }
        return analyze_and_commit(s, *req, *staged, path, profile, ctx);
    };
}

}  // namespace heapd::daemon
