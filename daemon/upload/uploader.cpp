#include "daemon/upload/uploader.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "base/atomic_file.h"
#include "base/fd_io.h"
#include "base/unique_fd.h"
#include "daemon/events/report_event.h"
#include "daemon/runtime/log_text.h"
#include "daemon/store/job_record.h"
#include "daemon/store/store.h"
#include "daemon/upload/stripped_dump.h"
#include "formats/report/fleet_entry.h"
#include "formats/report/quantities.h"
#include "formats/report/report_html.h"
#include "formats/report/report_json.h"

namespace heapd::daemon {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t max_metadata_bytes = 1u << 20;
constexpr std::size_t max_report_bytes = std::size_t{1} << 30;

// 5 s after the first failure, doubling, at most 10 minutes.
std::int64_t backoff_ms(unsigned attempts) {
    const std::int64_t ms = std::int64_t{5000} << std::min(attempts - 1, 7u);
    return std::min<std::int64_t>(ms, 600'000);
}

// The entries of the store that have a report, oldest first; nullopt when the store cannot be read.
std::optional<std::vector<entry_metadata>> read_entries(const std::string& store_dir) {
    std::error_code ec;
    fs::directory_iterator it(store_dir + "/entries", ec);
    if (ec) return std::nullopt;
    std::vector<entry_metadata> out;
    for (const fs::directory_entry& e : it) {
        const std::string id = e.path().filename().string();
        if (!valid_entry_id(id)) continue;
        auto text = read_file(e.path().string() + "/metadata.json", max_metadata_bytes);
        if (!text) continue;
        auto j = wire::json::parse(*text, nullptr, false);
        if (j.is_discarded()) continue;
        auto meta = metadata_from_json(j);
        if (meta && meta->id == id && meta->has_report) out.push_back(std::move(*meta));
    }
    std::sort(out.begin(), out.end(),
              [](const entry_metadata& a, const entry_metadata& b) { return made_after(b, a); });
    return out;
}

// A death record of the store (STORE/deaths/ID.json): its id, where its key goes, when it died.
struct death_file {
    std::string id, host, main_class, path;
    wire::json container = wire::json::object();
    std::int64_t died_ms = 0;
};

// The death records of the store, oldest first; none when there is no deaths folder. A record that
// cannot be read is left for the next pass (it may be being replaced).
std::vector<death_file> read_deaths(const std::string& store_dir) {
    std::vector<death_file> out;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(store_dir + "/deaths", ec)) {
        const std::string name = e.path().filename().string();
        if (!name.ends_with(".json")) continue;
        death_file d;
        d.id = name.substr(0, name.size() - 5);
        d.path = e.path().string();
        if (!valid_entry_id(d.id)) continue;
        auto text = read_file(d.path, max_metadata_bytes);
        auto j = text ? wire::json::parse(*text, nullptr, false) : wire::json();
        if (!j.is_object()) continue;
        d.host = j.value("host", std::string());
        d.main_class = j.value("main_class", std::string());
        if (auto c = j.find("container"); c != j.end() && c->is_object()) d.container = *c;
        d.died_ms = j.value("died_ms", std::int64_t{0});
        out.push_back(std::move(d));
    }
    std::sort(out.begin(), out.end(), [](const death_file& a, const death_file& b) { return a.id < b.id; });
    return out;
}

}  // namespace

std::string key_segment(std::string_view text) {
    std::string out;
    for (char c : text.substr(0, 128)) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                           c == '_' || c == '-';
        out += plain ? c : '_';
    }
    if (out.empty()) return "unknown";
    if (out == "." || out == "..") return "_";
    return out;
}

std::string fleet_service_name(std::string_view main_class) {
    if (const auto slash = main_class.rfind('/'); slash != std::string_view::npos) main_class.remove_prefix(slash + 1);
    return key_segment(main_class);
}

std::string fleet_service_key(std::string_view main_class, const wire::json& container) {
    if (container.is_object())
        if (auto w = container.find("workload");
            w != container.end() && w->is_string() && !w->get_ref<const std::string&>().empty())
            return key_segment(w->get<std::string>());
    return fleet_service_name(main_class);
}

std::string fleet_service_of(const entry_metadata& meta) {
    return fleet_service_key(main_class_of_command(meta.command_line), meta.container);
}

std::string key_base(const std::string& prefix, std::string_view host, std::string_view main_class, std::string_view id,
                     const wire::json& container) {
    std::string base = key_segment(host) + "/" + fleet_service_key(main_class, container) + "/" + key_segment(id);
    return prefix.empty() ? base : prefix + "/" + base;
}

std::string entry_key_base(const std::string& prefix, const entry_metadata& meta) {
    return key_base(prefix, meta.host, main_class_of_command(meta.command_line), meta.id, meta.container);
}

std::string credentials_file_of(const upload_options& o) {
    if (!o.credentials_file.empty()) return o.credentials_file;
    if (const char* dir = std::getenv("CREDENTIALS_DIRECTORY"); dir != nullptr) return std::string(dir) + "/s3";
    return "";
}

result<std::pair<std::string, std::string>> read_credentials(const std::string& path) {
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return fail(error_code::io, "cannot open the credentials file " + path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        return fail(error_code::bad_value, path + " is not a regular file");
    if ((st.st_mode & 0077) != 0)
        return fail(error_code::bad_value, "the credentials file " + path + " may be read by others (chmod 600 it)");
    // Read from the descriptor checked above, never by the path again.
    auto text = read_to_end(fd.get(), 64 * 1024);
    if (!text) return fail(error_code::io, "cannot read the credentials file " + path);
    std::string key, secret;
    std::size_t at = 0;
    while (at < text->size()) {
        std::size_t end = text->find('\n', at);
        if (end == std::string::npos) end = text->size();
        std::string line = text->substr(at, end - at);
        at = end + 1;
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (line.empty() || line.front() == '#' || line.front() == '[') continue;
        const auto eq = line.find('=');
        if (eq != std::string::npos) {
            std::string name = line.substr(0, eq), value = line.substr(eq + 1);
            auto trim = [](std::string& s) {
                s.erase(0, s.find_first_not_of(" \t"));
                s.erase(s.find_last_not_of(" \t") + 1);
            };
            trim(name);
            trim(value);
            if (name == "aws_access_key_id") key = value;
            if (name == "aws_secret_access_key") secret = value;
        } else if (const auto colon = line.find(':'); colon != std::string::npos && key.empty()) {
            key = line.substr(0, colon);
            secret = line.substr(colon + 1);
        }
    }
    if (key.empty() || secret.empty())
        return fail(error_code::bad_value, path +
                                               " names no access key and secret (KEY:SECRET, or aws_access_key_id "
                                               "and aws_secret_access_key lines)");
    return std::pair{key, secret};
}

uploader::uploader(upload_options options, std::string store_dir, upload_state state, std::unique_ptr<s3_client> client,
                   std::shared_ptr<spdlog::logger> log)
    : options_(std::move(options)),
      store_dir_(std::move(store_dir)),
      state_(std::move(state)),
      client_(std::move(client)),
      log_(std::move(log)) {}

std::size_t uploader::run_pass(const std::atomic<bool>& stop) {
    auto entries = read_entries(store_dir_);
    if (!entries) {
        log_->warn("cannot read the store {}: nothing uploaded this time", store_dir_);
        return counters_.queued;
    }
    const std::vector<death_file> deaths = options_.deaths ? read_deaths(store_dir_) : std::vector<death_file>{};
    std::set<std::string> present;
    for (const entry_metadata& m : *entries) present.insert(m.id);
    for (const death_file& d : deaths) present.insert(d.id);
    // Entries the store no longer has: their progress and markers go.
    for (const std::string& id : state_.pending())
        if (!present.contains(id)) {
            log_->info("dump {} left the store before it was uploaded", id);
            state_.forget(id);
            ++counters_.entries_gone;
        }
    for (const std::string& id : state_.done())
        if (!present.contains(id)) state_.forget_done(id);

    std::size_t waiting = 0;
    for (const entry_metadata& meta : *entries) {
        if (stop) break;
        if (state_.is_done(meta.id)) continue;
        if (auto p = state_.load(meta.id); p && !ignore_backoff_ && p->next_attempt_ms > now_ms()) {
            ++waiting;
            continue;
        }
        if (!upload_entry(meta, stop)) ++waiting;
    }
    for (const death_file& d : deaths) {
        if (stop) break;
        if (state_.is_done(d.id)) continue;
        if (auto p = state_.load(d.id); p && !ignore_backoff_ && p->next_attempt_ms > now_ms()) {
            ++waiting;
            continue;
        }
        const std::string base = key_base(options_.prefix, d.host, d.main_class, d.id, d.container);
        if (!upload_files(d.id, base, {{"death.json", d.path, "application/json"}}, nullptr, stop)) ++waiting;
    }
    counters_.queued = waiting;
    return waiting;
}

bool uploader::upload_entry(const entry_metadata& meta, const std::atomic<bool>& stop) {
    std::vector<wanted_file> files = {{"report.json", entry_dir(meta.id) + "/report.json", "application/json"}};
    if (options_.html)
        files.push_back({"report.html", state_.work_path(meta.id, "report.html"), "text/html; charset=utf-8"});
    if (options_.dump && meta.has_dump)
        files.push_back({"dump.hprof.gz", state_.work_path(meta.id, "dump.hprof.gz"), "application/gzip"});
    // Last: a summary in the bucket says the rest is there (heapd fleet reads only it).
    files.push_back({"summary.json", state_.work_path(meta.id, "summary.json"), "application/json"});
    return upload_files(meta.id, entry_key_base(options_.prefix, meta), files, &meta, stop);
}

bool uploader::upload_files(const std::string& id, const std::string& key_base, const std::vector<wanted_file>& files,
                            const entry_metadata* meta, const std::atomic<bool>& stop) {
    entry_progress fresh;
    fresh.dump_id = id;
    fresh.key_base = key_base;
    entry_progress p = state_.load(id).value_or(fresh);
    const std::string what = (meta != nullptr ? "dump " : "death record ") + id;
    std::uint64_t sent = 0;
    for (const wanted_file& w : files) {
        file_progress& f = p.file(w.name);
        if (f.done) continue;
        struct stat st {};
        if (::lstat(w.path.c_str(), &st) != 0) {
            // Made here once; a file that cannot be made (a damaged dump) is left out, said so.
            result<void> made{};
            if (meta == nullptr) {
                made = fail(error_code::not_found, w.path + " is gone");
            } else if (w.name == "report.html") {
                if (auto html = make_html(*meta, w.path); !html) made = std::unexpected(html.error());
            } else if (w.name == "summary.json") {
                if (auto summary = make_summary(*meta, key_base, w.path); !summary)
                    made = std::unexpected(summary.error());
            } else {
                made = write_stripped_gzip(entry_dir(id) + "/dump.hprof", w.path, state_.work_dir());
            }
            if (!made) {
                log_->warn("{}: {} left out: {}", what, w.name, bounded_text(made.error().describe()));
                f.done = true;
                state_.save(p);
                continue;
            }
        }
        auto done = upload_file(p, f, w.path, w.type, stop);
        if (!done) {
            ++p.attempts;
            ++counters_.failures;
            p.next_attempt_ms = now_ms() + backoff_ms(p.attempts);
            p.last_error = done.error().message;
            state_.save(p);
            log_->warn("{}: {} not uploaded ({}), attempt {}; next in {} s", what, w.name,
                       bounded_text(done.error().message), p.attempts, backoff_ms(p.attempts) / 1000);
            return false;
        }
        f.done = true;
        ++counters_.objects;
        counters_.bytes += f.size;
        sent += f.size;
        state_.save(p);
    }
    if (auto marked = state_.mark_done(id); !marked) {
        log_->warn("{}: uploaded, but cannot record it: {}", what, marked.error().describe());
        return false;
    }
    ++counters_.entries_done;
    counters_.last_success_ms = now_ms();
    log_->info("{} uploaded to s3://{}/{}/ ({} file{}, {})", what, options_.bucket, p.key_base, files.size(),
               files.size() == 1 ? "" : "s", text::human_bytes(sent));
    return true;
}

s3_result<void> uploader::upload_file(entry_progress& p, file_progress& f, const std::string& path,
                                      const std::string& content_type, const std::atomic<bool>& stop) {
    const std::string key = p.key_base + "/" + f.name;
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        return std::unexpected(s3_error{0, "", "cannot open " + path + ": " + std::strerror(errno)});
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size <= options_.part_size) {
        f.size = size;
        return client_->put_object(key, fd.get(), 0, size, content_type);
    }
    if (!f.upload_id.empty() && f.size != size) {  // the file was made again: start over
        f.upload_id.clear();
        f.parts.clear();
    }
    f.size = size;
    if (f.upload_id.empty()) {
        auto id = client_->create_multipart(key, content_type);
        if (!id) return std::unexpected(id.error());
        f.upload_id = *id;
        f.parts.clear();
        state_.save(p);
    }
    // The server forgot the upload (restarted, or it expired): start it again under the same key.
    auto restart_if_forgotten = [&](const s3_error& e) {
        if (e.code == "NoSuchUpload") {
            f.upload_id.clear();
            f.parts.clear();
        }
        return std::unexpected(e);
    };
    const std::uint64_t count = (size + options_.part_size - 1) / options_.part_size;
    for (std::uint64_t n = f.parts.size() + 1; n <= count; ++n) {
        if (stop) return std::unexpected(s3_error{0, "", "stopped"});
        const std::uint64_t offset = (n - 1) * options_.part_size;
        auto etag = client_->upload_part(key, f.upload_id, static_cast<unsigned>(n), fd.get(), offset,
                                         std::min(options_.part_size, size - offset));
        if (!etag) return restart_if_forgotten(etag.error());
        f.parts.push_back(s3_part{static_cast<unsigned>(n), *etag});
        ++counters_.parts;
        state_.save(p);
    }
    if (auto done = client_->complete_multipart(key, f.upload_id, f.parts); !done)
        return restart_if_forgotten(done.error());
    return {};
}

result<analysis_report> uploader::stored_report(const std::string& id) const {
    auto text = read_file(entry_dir(id) + "/report.json", max_report_bytes);
    if (!text) return std::unexpected(text.error());
    auto j = wire::json::parse(*text, nullptr, false);
    if (j.is_discarded()) return fail(error_code::corrupt, "the stored report is not JSON");
    return report_from_json(j);
}

result<std::string> uploader::make_html(const entry_metadata& meta, const std::string& out_path) const {
    auto report = stored_report(meta.id);
    if (!report) return std::unexpected(report.error());
    html_context context;
    context.dump_id = meta.id;
    context.host = meta.host;
    context.trigger = meta.trigger;
    context.command_line = meta.command_line;
    context.pid = meta.pid;
    context.created_ms = meta.created_ms;
    if (auto w = write_file_atomic(out_path, render_html(*report, context), file_access{0600, 0700, 0, false}); !w)
        return std::unexpected(w.error());
    return out_path;
}

result<std::string> uploader::make_summary(const entry_metadata& meta, const std::string& key_base,
                                           const std::string& out_path) const {
    auto report = stored_report(meta.id);
    if (!report) return std::unexpected(report.error());
    fleet_context context;
    context.key = key_base;
    context.id = meta.id;
    context.host = meta.host;
    context.service = fleet_service_of(meta);
    context.pid = meta.pid;
    context.jvm_start_time = meta.jvm_start_time;
    context.created_ms = meta.created_ms;
    context.trigger = meta.trigger;
    context.oom_kind = meta.oom_kind;
    context.jvm = meta.jvm;
    if (meta.container.is_object()) {
        context.container = meta.container.value("label", std::string());
        context.pod = meta.container.value("pod", std::string());
        context.pod_namespace = meta.container.value("namespace", std::string());
    }
    const std::string summary =
        to_json(fleet_entry_of(*report, context)).dump(-1, ' ', false, wire::json::error_handler_t::replace) + "\n";
    if (auto w = write_file_atomic(out_path, summary, file_access{0600, 0700, 0, false}); !w)
        return std::unexpected(w.error());
    return out_path;
}

std::string uploader::metrics_text() const {
    std::string out;
    auto metric = [&](const char* name, const char* type, const char* help, std::uint64_t value) {
        out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " +
               std::to_string(value) + "\n";
    };
    metric("heapd_upload_objects_total", "counter", "Files heapd upload put in the bucket.", counters_.objects);
    metric("heapd_upload_bytes_total", "counter", "Bytes of the files put in the bucket.", counters_.bytes);
    metric("heapd_upload_parts_total", "counter", "Parts of multipart uploads sent.", counters_.parts);
    metric("heapd_upload_entries_total", "counter", "Dumps whose files are all in the bucket.", counters_.entries_done);
    metric("heapd_upload_failures_total", "counter", "Failed upload attempts (each is tried again).",
           counters_.failures);
    metric("heapd_upload_entries_gone_total", "counter", "Dumps that left the store before they were uploaded.",
           counters_.entries_gone);
    metric("heapd_upload_queue_entries", "gauge", "Dumps waiting to be uploaded after the last pass.",
           counters_.queued);
    metric("heapd_upload_last_success_timestamp_seconds", "gauge", "When a dump was last uploaded whole.",
           static_cast<std::uint64_t>(counters_.last_success_ms / 1000));
    return out;
}

}  // namespace heapd::daemon
