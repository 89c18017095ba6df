#pragma once
// A job of the daemon as clients see it and the store keeps it: what, whose, how far, how it ended.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {

// Where a job is in its life; done, failed and cancelled are final.
enum class job_state { queued, running, done, failed, cancelled };

std::string_view job_state_name(job_state s);
std::optional<job_state> job_state_from_name(std::string_view name);

// How the error of a job cancelled because heapd stopped begins (not by a user: its work may be
// taken up again at the next start).
inline constexpr std::string_view stopped_prefix = "cancelled: heapd ";

// One job: an analysis or a dump. Plain data, copied out as snapshots.
struct job_record {
    std::uint64_t id = 0;
    std::string kind;  // "analyze", "dump"
    job_state state = job_state::queued;
    uid_t owner_uid = 0;  // who asked for it
    gid_t owner_gid = 0;
    std::int64_t client_pid = 0;  // the asking process (SO_PEERCRED), 0 when none
    std::int64_t jvm_pid = 0;     // the JVM it concerns, 0 when none
    std::string trigger;          // "heapctl report", "request", "oom"
    std::string subject;          // the dump's name as the client gave it
    std::uint64_t subject_bytes = 0;
    std::string phase;                  // the phase running or last run
    std::uint64_t done = 0, total = 0;  // bytes of work
    std::int64_t created_ms = 0, started_ms = 0, finished_ms = 0;
    std::string error;       // why it failed or was cancelled
    std::string error_kind;  // the wire error code for error
    std::string entry;       // the store entry it made

    bool final() const {
        return state == job_state::done || state == job_state::failed || state == job_state::cancelled;
    }
    bool cancelled_by_stop() const { return state == job_state::cancelled && error.starts_with(stopped_prefix); }
    // Milliseconds run so far (running) or in all (final); 0 while queued.
    std::int64_t duration_ms(std::int64_t now_ms) const;
};

wire::json to_json(const job_record& j, std::int64_t now_ms);
// Reads a job back; corrupt when a required key is missing or mistyped.
result<job_record> job_from_json(const wire::json& j);

// Milliseconds since the epoch, by the wall clock.
std::int64_t now_ms();

}  // namespace heapd::daemon
