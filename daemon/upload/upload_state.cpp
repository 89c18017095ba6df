#include "daemon/upload/upload_state.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "base/atomic_file.h"
#include "daemon/store/store.h"

namespace heapd::daemon {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t max_progress_bytes = 4u << 20;  // 10,000 parts and their ETags fit
const file_access private_access{0600, 0700, 0, false};

std::vector<std::string> names_in(const std::string& dir, std::string_view suffix) {
    std::vector<std::string> ids;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
        std::string name = e.path().filename().string();
        if (!name.ends_with(suffix)) continue;
        name.resize(name.size() - suffix.size());
        if (valid_entry_id(name)) ids.push_back(name);
    }
    return ids;
}

}  // namespace

file_progress& entry_progress::file(std::string_view name) {
    for (file_progress& f : files)
        if (f.name == name) return f;
    file_progress& f = files.emplace_back();
    f.name.assign(name.data(), name.size());
    return f;
}

wire::json to_json(const entry_progress& p) {
    wire::json files = wire::json::array();
    for (const file_progress& f : p.files) {
        wire::json parts = wire::json::array();
        for (const s3_part& part : f.parts) parts.push_back({{"number", part.number}, {"etag", part.etag}});
        files.push_back(
            {{"name", f.name}, {"done", f.done}, {"size", f.size}, {"upload_id", f.upload_id}, {"parts", parts}});
    }
    return {{"dump_id", p.dump_id},
            {"key_base", p.key_base},
            {"files", files},
            {"attempts", p.attempts},
            {"next_attempt_ms", p.next_attempt_ms},
            {"last_error", p.last_error}};
}

result<entry_progress> progress_from_json(const wire::json& j) {
    try {
        entry_progress p;
        p.dump_id = j.at("dump_id").get<std::string>();
        p.key_base = j.at("key_base").get<std::string>();
        p.attempts = j.at("attempts").get<unsigned>();
        p.next_attempt_ms = j.at("next_attempt_ms").get<std::int64_t>();
        p.last_error = j.at("last_error").get<std::string>();
        for (const wire::json& f : j.at("files")) {
            file_progress fp;
            fp.name = f.at("name").get<std::string>();
            fp.done = f.at("done").get<bool>();
            fp.size = f.at("size").get<std::uint64_t>();
            fp.upload_id = f.at("upload_id").get<std::string>();
            for (const wire::json& part : f.at("parts"))
                fp.parts.push_back(s3_part{part.at("number").get<unsigned>(), part.at("etag").get<std::string>()});
            p.files.push_back(std::move(fp));
        }
        if (!valid_entry_id(p.dump_id)) return fail(error_code::corrupt, "bad dump id " + p.dump_id);
        return p;
    } catch (const wire::json::exception& e) {
        return fail(error_code::corrupt, std::string("upload progress: ") + e.what());
    }
}

result<upload_state> upload_state::open(const std::string& configured) {
    // Under DynamicUser=, systemd makes StateDirectory= /var/lib/NAME a link to /var/lib/private/NAME:
    // the service's own directory, followed once here; nothing below it is followed.
    std::error_code ec;
    std::string dir = configured;
    if (fs::is_symlink(configured, ec)) {
        dir = fs::canonical(configured, ec).string();
        if (ec) return fail(error_code::io, "cannot resolve " + configured + ": " + ec.message());
    }
    for (const std::string& d : {dir, dir + "/done", dir + "/pending", dir + "/work"})
        if (auto made = make_dir(d, private_access); !made) return std::unexpected(made.error());
    // Half-written progress files of a run that stopped.
    for (const std::string& d : {dir + "/pending", dir + "/done"})
        for (const fs::directory_entry& e : fs::directory_iterator(d, ec))
            if (is_temp_name(e.path().filename().string())) fs::remove(e.path(), ec);
    return upload_state(dir);
}

bool upload_state::is_done(const std::string& id) const {
    struct stat st {};
    return ::lstat((dir_ + "/done/" + id).c_str(), &st) == 0;
}

result<void> upload_state::mark_done(const std::string& id) {
    if (auto w = write_file_atomic(dir_ + "/done/" + id, "", private_access); !w) return w;
    forget(id);
    return {};
}

std::optional<entry_progress> upload_state::load(const std::string& id) const {
    auto text = read_file(dir_ + "/pending/" + id + ".json", max_progress_bytes);
    if (!text) return std::nullopt;
    auto j = wire::json::parse(*text, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    auto p = progress_from_json(j);
    if (!p || p->dump_id != id) return std::nullopt;
    return *p;
}

result<void> upload_state::save(const entry_progress& p) const {
    return write_file_atomic(dir_ + "/pending/" + p.dump_id + ".json", to_json(p).dump(), private_access);
}

void upload_state::forget(const std::string& id) const {
    ::unlink((dir_ + "/pending/" + id + ".json").c_str());
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(dir_ + "/work", ec))
        if (e.path().filename().string().starts_with(id + ".")) fs::remove(e.path(), ec);
}

void upload_state::forget_done(const std::string& id) const { ::unlink((dir_ + "/done/" + id).c_str()); }

std::vector<std::string> upload_state::pending() const { return names_in(dir_ + "/pending", ".json"); }

std::vector<std::string> upload_state::done() const { return names_in(dir_ + "/done", ""); }

std::string upload_state::work_path(const std::string& id, std::string_view name) const {
    return dir_ + "/work/" + id + "." + std::string(name);
}

}  // namespace heapd::daemon
