#include "daemon/store/job_record.h"

#include <array>
#include <chrono>

namespace heapd::daemon {
namespace {

constexpr std::array<std::pair<job_state, std::string_view>, 5> names{{{job_state::queued, "queued"},
                                                                       {job_state::running, "running"},
                                                                       {job_state::done, "done"},
                                                                       {job_state::failed, "failed"},
                                                                       {job_state::cancelled, "cancelled"}}};

}  // namespace

std::string_view job_state_name(job_state s) {
    for (auto [state, name] : names)
        if (state == s) return name;
    return "unknown";
}

std::optional<job_state> job_state_from_name(std::string_view name) {
    for (auto [state, n] : names)
        if (n == name) return state;
    return std::nullopt;
}

std::int64_t job_record::duration_ms(std::int64_t now) const {
    if (started_ms == 0) return 0;
    return std::max<std::int64_t>(0, (finished_ms != 0 ? finished_ms : now) - started_ms);
}

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

wire::json to_json(const job_record& j, std::int64_t now) {
    return {{"id", j.id},
            {"kind", j.kind},
            {"state", std::string(job_state_name(j.state))},
            {"owner_uid", j.owner_uid},
            {"owner_gid", j.owner_gid},
            {"client_pid", j.client_pid},
            {"jvm_pid", j.jvm_pid},
            {"trigger", j.trigger},
            {"subject", j.subject},
            {"subject_bytes", j.subject_bytes},
            {"phase", j.phase},
            {"done", j.done},
            {"total", j.total},
            {"created_ms", j.created_ms},
            {"started_ms", j.started_ms},
            {"finished_ms", j.finished_ms},
            {"duration_ms", j.duration_ms(now)},
            {"error", j.error},
            {"error_kind", j.error_kind},
            {"entry", j.entry}};
}

result<job_record> job_from_json(const wire::json& j) {
    if (!j.is_object()) return fail(error_code::corrupt, "job is not a JSON object");
    job_record r;
    try {
        r.id = j.at("id").get<std::uint64_t>();
        r.kind = j.at("kind").get<std::string>();
        if (r.kind == "analyse") r.kind = "analyze";  // as earlier heapd versions wrote it
        auto state = job_state_from_name(j.at("state").get<std::string>());
        if (!state) return fail(error_code::corrupt, "job has an unknown state");
        r.state = *state;
        r.owner_uid = j.at("owner_uid").get<uid_t>();
        r.owner_gid = j.at("owner_gid").get<gid_t>();
        r.client_pid = j.value("client_pid", std::int64_t{0});
        r.jvm_pid = j.value("jvm_pid", std::int64_t{0});
        r.trigger = j.value("trigger", "");
        r.subject = j.value("subject", "");
        r.subject_bytes = j.value("subject_bytes", std::uint64_t{0});
        r.phase = j.value("phase", "");
        r.done = j.value("done", std::uint64_t{0});
        r.total = j.value("total", std::uint64_t{0});
        r.created_ms = j.at("created_ms").get<std::int64_t>();
        r.started_ms = j.value("started_ms", std::int64_t{0});
        r.finished_ms = j.value("finished_ms", std::int64_t{0});
        r.error = j.value("error", "");
        r.error_kind = j.value("error_kind", "");
        r.entry = j.value("entry", "");
    } catch (const std::exception& e) {
        return fail(error_code::corrupt, std::string("job record is damaged: ") + e.what());
    }
    if (r.id == 0) return fail(error_code::corrupt, "job id 0");
    return r;
}

}  // namespace heapd::daemon
