#include "daemon/deaths/death_store.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>

namespace heapd::daemon {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t max_record_bytes = 1u << 20;
constexpr std::string_view suffix = ".json";

// "20261127T221502-death-1234": when it died, then its pid (a letter or digit of the store's ids).
std::string record_id(const death_record& r) {
    const std::time_t t = static_cast<std::time_t>(r.died_ms / 1000);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", &tm);
    return std::string(stamp) + "-death-" + std::to_string(r.pid);
}

}  // namespace

result<std::unique_ptr<death_log>> death_log::open(std::string dir, file_access access, std::size_t max_records) {
    if (auto made = make_dir(dir, access); !made) return std::unexpected(made.error());
    std::unique_ptr<death_log> log(new death_log(std::move(dir), access, std::max<std::size_t>(max_records, 1)));
    for (const std::string& id : log->ids()) {
        // A record that cannot be read counts as its own owner's (-1): it goes when it is the oldest.
        uid_t owner = static_cast<uid_t>(-1);
        if (auto text = read_file(log->dir_ + "/" + id + std::string(suffix), max_record_bytes)) {
            const wire::json record = wire::json::parse(*text, nullptr, false);
            if (record.is_object() && record.contains("uid") && record["uid"].is_number_unsigned())
                owner = record["uid"].get<uid_t>();
        }
        log->owners_[id] = owner;
    }
    std::lock_guard lock(log->mu_);
    log->trim();
    return log;
}

void death_log::trim() {
    while (owners_.size() > max_records_) {
        std::map<uid_t, std::size_t> count;
        for (const auto& [id, owner] : owners_) ++count[owner];
        std::size_t most = 0;
        for (const auto& [owner, n] : count) most = std::max(most, n);
        // The oldest record of an owner who has that many (the ids start with the time of death).
        auto oldest =
            std::find_if(owners_.begin(), owners_.end(), [&](const auto& e) { return count[e.second] == most; });
        ::unlink((dir_ + "/" + oldest->first + std::string(suffix)).c_str());
        owners_.erase(oldest);
    }
}

std::vector<std::string> death_log::ids() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
        const std::string name = e.path().filename().string();
        if (!name.ends_with(suffix)) continue;
        const std::string id = name.substr(0, name.size() - suffix.size());
        if (valid_entry_id(id)) out.push_back(id);
    }
    std::sort(out.begin(), out.end());  // the ids start with the time of death
    return out;
}

result<std::string> death_log::keep(const store& s, death_record& r) {
    // Under the lock: a dump kept meanwhile is either seen here or finds this record (note_oom_dump).
    std::lock_guard lock(mu_);
    r.kept.clear();
    r.oom_dump.clear();
    for (const entry_metadata& m : s.entries())  // newest first
        if (m.pid == r.pid && m.jvm_start_time == r.start_time && m.host == r.host) {
            r.kept.push_back(m.id);
            if (m.trigger == "oom" && r.oom_dump.empty()) r.oom_dump = m.id;
        }
    const std::string id = record_id(r);
    if (auto w = write_file_atomic(dir_ + "/" + id + std::string(suffix), to_json(r).dump(2), access_); !w)
        return std::unexpected(w.error());
    owners_[id] = r.uid;
    trim();
    return id;
}

result<std::string> death_log::note_oom_dump(const entry_metadata& dump) {
    if (dump.trigger != "oom" || dump.pid <= 0 || dump.jvm_start_time == 0) return std::string();
    std::lock_guard lock(mu_);
    const std::string tail = "-death-" + std::to_string(dump.pid);
    for (const std::string& id : ids()) {
        if (!id.ends_with(tail)) continue;
        const std::string path = dir_ + "/" + id + std::string(suffix);
        auto text = read_file(path, max_record_bytes);
        if (!text) continue;
        wire::json record = wire::json::parse(*text, nullptr, false);
        if (!record.is_object() || record.value("start_time", std::uint64_t{0}) != dump.jvm_start_time ||
            record.value("host", std::string()) != dump.host || record.contains("oom_dump"))
            continue;
        record["oom_dump"] = dump.id;
        if (auto w = write_file_atomic(path, record.dump(2), access_); !w) return std::unexpected(w.error());
        return id;
    }
    return std::string();
}

std::vector<wire::json> death_log::list(const std::function<bool(uid_t)>& may_see) const {
    std::vector<wire::json> out;
    std::lock_guard lock(mu_);
    auto all = ids();
    for (auto id = all.rbegin(); id != all.rend(); ++id) {
        auto text = read_file(dir_ + "/" + *id + std::string(suffix), max_record_bytes);
        if (!text) continue;
        wire::json record = wire::json::parse(*text, nullptr, false);
        if (!record.is_object() || !record.contains("uid") || !record["uid"].is_number_unsigned() ||
            !may_see(record["uid"].get<uid_t>()))
            continue;
        out.push_back({{"id", *id}, {"death", std::move(record)}});
    }
    return out;
}

}  // namespace heapd::daemon
