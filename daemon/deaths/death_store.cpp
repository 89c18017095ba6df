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
    return std::unique_ptr<death_log>(new death_log(std::move(dir), access, std::max<std::size_t>(max_records, 1)));
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
    r.kept.clear();
    for (const entry_metadata& m : s.entries())  // newest first
        if (m.pid == r.pid && m.jvm_start_time == r.start_time && m.host == r.host) r.kept.push_back(m.id);
    const std::string id = record_id(r);
    std::lock_guard lock(mu_);
    if (auto w = write_file_atomic(dir_ + "/" + id + std::string(suffix), to_json(r).dump(2), access_); !w)
        return std::unexpected(w.error());
    auto all = ids();
    for (std::size_t i = 0; i + max_records_ < all.size(); ++i)
        ::unlink((dir_ + "/" + all[i] + std::string(suffix)).c_str());
    return id;
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
