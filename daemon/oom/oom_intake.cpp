#include "daemon/oom/oom_intake.h"

#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

namespace heapd::daemon {
namespace {

constexpr std::size_t max_record_bytes = 128 * 1024;  // args of at most 64 KiB (the spool's bound), and the rest
constexpr std::size_t max_id_bytes = 48;

bool id_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

}  // namespace

wire::json to_json(const intake_record& r) {
    return {{"key", r.key},
            {"writer_uid", r.writer_uid},
            {"writer_gid", r.writer_gid},
            {"args", r.args},
            {"received_ms", r.received_ms},
            {"attempts", r.attempts},
            {"last_error", r.last_error},
            {"dump_dev", r.dump_dev},
            {"dump_ino", r.dump_ino},
            {"collected", r.collected}};
}

result<intake_record> intake_record_from_json(const wire::json& j) {
    auto bad = [](const std::string& what) { return fail(error_code::corrupt, "an OOM intake record " + what); };
    if (!j.is_object()) return bad("is not a JSON object");
    for (const char* k : {"writer_uid", "writer_gid", "attempts", "dump_dev", "dump_ino"})
        if (!j.contains(k) || !j[k].is_number_unsigned()) return bad(std::string("has no whole number ") + k);
    if (!j.contains("key") || !j["key"].is_string()) return bad("has no key");
    if (!j.contains("args") || !j["args"].is_object()) return bad("has no arguments");
    intake_record r;
    r.key = j["key"].get<std::string>();
    r.writer_uid = j["writer_uid"].get<uid_t>();
    r.writer_gid = j["writer_gid"].get<gid_t>();
    r.args = j["args"];
    r.received_ms = j.value("received_ms", std::int64_t{0});
    r.attempts = j["attempts"].get<unsigned>();
    r.last_error = j.value("last_error", std::string());
    r.dump_dev = j["dump_dev"].get<std::uint64_t>();
    r.dump_ino = j["dump_ino"].get<std::uint64_t>();
    r.collected = j.value("collected", false);
    if (intake_key(r.writer_uid, r.key.substr(std::min(r.key.size(), r.key.find('-') + 1))) != r.key)
        return bad("has a key that is not its writer's");
    return r;
}

std::string new_request_id() {
    unsigned char bytes[16] = {};
    for (std::size_t got = 0; got < sizeof bytes;) {
        const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
        if (n > 0) got += static_cast<std::size_t>(n);
    }
    static constexpr char digits[] = "0123456789abcdef";
    std::string id;
    for (unsigned char b : bytes) {
        id += digits[b >> 4];
        id += digits[b & 15];
    }
    return id;
}

std::optional<std::string> intake_key(uid_t writer, std::string_view request_id) {
    if (request_id.empty() || request_id.size() > max_id_bytes ||
        !std::all_of(request_id.begin(), request_id.end(), id_char))
        return std::nullopt;
    return std::to_string(writer) + "-" + std::string(request_id);
}

result<oom_intake> oom_intake::open(const std::string& dir, const file_access& access,
                                    std::vector<intake_record>& records, std::vector<std::string>& problems) {
    if (auto made = make_dir(dir, access); !made) return std::unexpected(made.error());
    oom_intake intake(dir, access);
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) files.push_back(e.path());
    if (ec) return fail(error_code::io, "cannot read " + dir + ": " + ec.message());
    std::sort(files.begin(), files.end());
    for (const auto& p : files) {
        const std::string name = p.filename().string();
        if (is_temp_name(name)) {  // half-written: its request is still where it came from
            std::filesystem::remove(p, ec);
            continue;
        }
        auto text = read_file(p.string(), max_record_bytes);
        auto j = text ? wire::json::parse(*text, nullptr, false) : wire::json();
        auto r = intake_record_from_json(j);
        if (!r || name != r->key + ".json") {
            problems.push_back(p.string() + ": " + (r ? "named after another request" : r.error().message) +
                               "; removed");
            std::filesystem::remove(p, ec);
            continue;
        }
        intake.writers_[r->key] = r->writer_uid;
        ++intake.per_writer_[r->writer_uid];
        records.push_back(std::move(*r));
    }
    return intake;
}

result<void> oom_intake::keep(const intake_record& r) {
    const bool known = writers_.contains(r.key);
    if (!known && writers_.size() >= max_records)
        return fail(error_code::busy, "too many OutOfMemoryError requests under way (" + std::to_string(max_records) +
                                          "); it stays spooled");
    if (!known && per_writer_[r.writer_uid] >= max_per_writer)
        return fail(error_code::busy, "too many OutOfMemoryError requests of uid " + std::to_string(r.writer_uid) +
                                          " under way (" + std::to_string(max_per_writer) + "); it stays spooled");
    if (auto written = write_file_atomic(path_of(r.key), to_json(r).dump(), access_); !written)
        return std::unexpected(written.error());
    if (!known) {
        writers_[r.key] = r.writer_uid;
        ++per_writer_[r.writer_uid];
    }
    return {};
}

void oom_intake::drop(const std::string& key) {
    auto it = writers_.find(key);
    if (it == writers_.end()) return;
    ::unlink(path_of(key).c_str());
    sync_dir(dir_);
    if (auto w = per_writer_.find(it->second); w != per_writer_.end() && --w->second == 0) per_writer_.erase(w);
    writers_.erase(it);
}

}  // namespace heapd::daemon
