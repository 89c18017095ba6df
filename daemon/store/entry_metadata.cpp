#include "daemon/store/entry_metadata.h"

namespace heapd::daemon {

bool made_after(const entry_metadata& a, const entry_metadata& b) {
    if (a.sequence != b.sequence) return a.sequence > b.sequence;
    if (a.created_ms != b.created_ms) return a.created_ms > b.created_ms;
    return a.id > b.id;
}

wire::json to_json(const entry_metadata& m) {
    wire::json j = {{"id", m.id},
                    {"created_ms", m.created_ms},
                    {"owner_uid", m.owner_uid},
                    {"owner_gid", m.owner_gid},
                    {"trigger", m.trigger},
                    {"source", m.source},
                    {"file", m.file},
                    {"file_bytes", m.file_bytes},
                    {"host", m.host},
                    {"pid", m.pid},
                    {"claimed_pid", m.claimed_pid},
                    {"jvm_start_time", m.jvm_start_time},
                    {"jvm", m.jvm},
                    {"command_line", m.command_line},
                    {"job", m.job},
                    {"has_dump", m.has_dump},
                    {"has_report", m.has_report},
                    {"headline", m.headline},
                    {"stored_bytes", m.stored_bytes}};
    if (m.sequence != 0) j["sequence"] = m.sequence;
    if (!m.oom_request.empty()) j["oom_request"] = m.oom_request;
    if (!m.damage.empty()) j["damage"] = m.damage;
    if (m.container.is_object() && !m.container.empty()) j["container"] = m.container;
    if (!m.oom_kind.empty()) {
        j["oom_kind"] = m.oom_kind;
        j["oom_error"] = m.oom_error;
    }
    return j;
}

result<entry_metadata> metadata_from_json(const wire::json& j) {
    if (!j.is_object()) return fail(error_code::corrupt, "metadata is not a JSON object");
    entry_metadata m;
    try {
        m.id = j.at("id").get<std::string>();
        m.created_ms = j.at("created_ms").get<std::int64_t>();
        m.owner_uid = j.at("owner_uid").get<uid_t>();
        m.owner_gid = j.at("owner_gid").get<gid_t>();
        m.trigger = j.at("trigger").get<std::string>();
        m.source = j.at("source").get<std::string>();
        m.file = j.at("file").get<std::string>();
        m.file_bytes = j.at("file_bytes").get<std::uint64_t>();
        m.host = j.value("host", "");
        m.pid = j.value("pid", std::int64_t{0});
        m.claimed_pid = j.value("claimed_pid", std::int64_t{0});
        m.jvm_start_time = j.value("jvm_start_time", std::uint64_t{0});
        m.jvm = j.value("jvm", "");
        m.command_line = j.value("command_line", "");
        m.job = j.value("job", std::uint64_t{0});
        m.has_dump = j.at("has_dump").get<bool>();
        m.has_report = j.at("has_report").get<bool>();
        m.headline = j.value("headline", "");
        m.oom_kind = j.value("oom_kind", "");
        m.oom_error = j.value("oom_error", "");
        m.sequence = j.value("sequence", std::uint64_t{0});
        m.oom_request = j.value("oom_request", "");
        m.damage = j.value("damage", "");
        if (auto c = j.find("container"); c != j.end() && c->is_object()) m.container = *c;
    } catch (const std::exception& e) {
        return fail(error_code::corrupt, std::string("metadata is damaged: ") + e.what());
    }
    if (m.id.empty()) return fail(error_code::corrupt, "metadata has an empty id");
    return m;
}

}  // namespace heapd::daemon
