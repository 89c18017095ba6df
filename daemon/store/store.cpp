#include "daemon/store/store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <filesystem>

#include "base/atomic_file.h"
#include "daemon/store/free_space.h"
#include "formats/report/report_json.h"

namespace heapd::daemon {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t max_metadata_bytes = 1u << 20;
constexpr std::size_t max_report_bytes = std::size_t{1} << 30;

// Sum of the sizes of the regular files directly in dir (links not followed).
std::uint64_t dir_bytes(const std::string& dir) {
    std::uint64_t total = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.symlink_status(ec).type() == fs::file_type::regular) total += e.file_size(ec);
    return total;
}

// The paths in dir, read before any of them is touched.
std::vector<fs::path> listing(const std::string& dir) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path());
    return out;
}

void remove_all(const std::string& path) {
    std::error_code ec;
    fs::remove_all(path, ec);
}

// The entry in dir read back and checked: its metadata parses and names the directory. A file it
// says it has and that is gone is its damage, the rest kept (a lost dump leaves its report);
// corrupt when the metadata cannot be read, or when nothing but the metadata is left.
result<entry_metadata> read_entry(const std::string& dir, const std::string& name, bool& lost_now) {
    auto text = read_file(dir + "/metadata.json", max_metadata_bytes);
    if (!text) return std::unexpected(text.error());
    auto j = wire::json::parse(*text, nullptr, false);
    if (j.is_discarded()) return fail(error_code::corrupt, "metadata.json is not JSON");
    auto meta = metadata_from_json(j);
    if (!meta) return std::unexpected(meta.error());
    if (meta->id != name) return fail(error_code::corrupt, "metadata names another entry");
    std::error_code ec;
    auto gone = [&](const char* file) {
        return fs::symlink_status(dir + "/" + file, ec).type() != fs::file_type::regular;
    };
    std::string lost;
    if (meta->has_report && gone("report.json")) {
        meta->has_report = false;
        lost = "report.json";
    }
    if (meta->has_dump && gone("dump.hprof")) {
        meta->has_dump = false;
        lost += (lost.empty() ? "" : " and ") + std::string("dump.hprof");
    }
    if (!meta->has_report && !meta->has_dump)
        return fail(error_code::corrupt, lost.empty() ? "it has neither a report nor a dump" : lost + " missing");
    if (!lost.empty()) meta->damage = lost + " was missing";
    lost_now = !lost.empty();
    meta->stored_bytes = dir_bytes(dir);
    return meta;
}

}  // namespace

bool valid_entry_id(std::string_view id) {
    if (id.empty() || id.size() > 64 || id.front() == '-' || id.front() == '.') return false;
    return std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
    });
}

result<std::unique_ptr<store>> store::open(const store_options& options, store_recovery& recovery) {
    std::unique_ptr<store> s(new store(options));
    for (const char* sub : {"", "/entries", "/jobs", "/tmp", "/staging", "/damaged"})
        if (auto made = make_dir(options.root + sub, options.access); !made) return std::unexpected(made.error());
    const std::string lock = options.root + "/lock";
    s->lock_.reset(::open(lock.c_str(), O_RDWR | O_NOCTTY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!s->lock_) return fail_errno("cannot open", lock);
    if (::flock(s->lock_.get(), LOCK_EX | LOCK_NB) != 0)
        return fail(error_code::io, "another heapd is using the store " + options.root);
    if (auto k = s->load_key(); !k) return std::unexpected(k.error());
    if (auto r = s->recover(recovery); !r) return std::unexpected(r.error());
    return s;
}

result<void> store::load_key() {
    const std::string path = options_.root + "/key";
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC));
    struct stat st {};
    if (fd && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == static_cast<off_t>(key_.size()) &&
        ::pread(fd.get(), key_.data(), key_.size(), 0) == static_cast<ssize_t>(key_.size()))
        return {};
    if (!fd && errno != ENOENT) return fail_errno("cannot open", path);
    // None yet (or a damaged one): a new key, which makes names tagged with the old one unknown.
    for (std::size_t got = 0; got < key_.size();) {
        const ssize_t n = ::getrandom(key_.data() + got, key_.size() - got, 0);
        if (n > 0)
            got += static_cast<std::size_t>(n);
        else if (errno != EINTR)
            return fail_errno("cannot make a key for", path);
    }
    auto file = atomic_file::create(path, 0600);
    if (!file) return std::unexpected(file.error());
    if (auto w = file->write(std::string_view(reinterpret_cast<const char*>(key_.data()), key_.size())); !w) return w;
    return file->commit();
}

result<void> store::recover(store_recovery& recovery) {
    std::error_code ec;
    for (const fs::path& p : listing(tmp_dir())) {
        remove_all(p);
        ++recovery.removed_temp;
    }
    const std::string entries = options_.root + "/entries";
    for (const fs::path& p : listing(entries)) {
        const std::string name = p.filename();
        if (is_temp_name(name)) {
            remove_all(p);
            ++recovery.removed_temp;
            continue;
        }
        if (fs::is_symlink(p, ec) || !fs::is_directory(p, ec) || !valid_entry_id(name)) {
            remove_all(p);
            recovery.removed_corrupt.push_back("entries/" + name);
            continue;
        }
        // The store holds only directories of regular files: a link, a FIFO or a subdirectory in an
        // entry was put there by someone else, and makes the entry damaged (removed, never followed).
        std::optional<std::string> damage;
        for (const fs::path& f : listing(p)) {
            if (is_temp_name(f.filename().string())) {
                remove_all(f);
                ++recovery.removed_temp;
            } else if (fs::symlink_status(f, ec).type() != fs::file_type::regular) {
                damage = f.filename().string() + " is not a regular file";
            } else if (auto a = apply_access(f, false, options_.access); !a) {
                damage = a.error().message;
            }
        }
        if (damage) {
            remove_all(p);
            recovery.removed_corrupt.push_back("entries/" + name + " (" + *damage + ")");
            continue;
        }
        bool lost = false;
        auto meta = read_entry(p, name, lost);
        if (!meta) {
            quarantine(p.string(), name, meta.error().message, recovery);
            continue;
        }
        if (lost) {
            // Said once: the metadata now tells what is left.
            (void)write_file_atomic((p / "metadata.json").string(), to_json(*meta).dump(2), options_.access);
            recovery.repaired.push_back("entries/" + name + " (" + meta->damage + ")");
        }
        (void)apply_access(p, true, options_.access);
        last_sequence_ = std::max(last_sequence_, meta->sequence);
        entries_[name] = std::move(*meta);
    }
    sync_dir(entries);
    read_damaged(recovery);

    const std::string jobs = options_.root + "/jobs";
    const std::int64_t now = now_ms();
    for (const fs::path& p : listing(jobs)) {
        const std::string name = p.filename();
        if (is_temp_name(name)) {
            remove_all(p);
            ++recovery.removed_temp;
            continue;
        }
        auto text = read_file(p, max_metadata_bytes);
        auto j = text ? wire::json::parse(*text, nullptr, false) : wire::json(nullptr);
        auto job = j.is_discarded() ? result<job_record>(fail(error_code::corrupt, "not JSON")) : job_from_json(j);
        if (!job || name != std::to_string(job->id) + ".json") {
            remove_all(p);
            recovery.removed_corrupt.push_back("jobs/" + name);
            continue;
        }
        if (!job->final()) {
            job->state = job_state::failed;
            job->error = "interrupted: heapd stopped before the job finished";
            job->error_kind = "failed";
            job->finished_ms = std::max(now, job->started_ms);
            (void)save_job(*job);
            ++recovery.interrupted;
        }
        recovery.jobs.push_back(std::move(*job));
    }
    std::sort(recovery.jobs.begin(), recovery.jobs.end(),
              [](const job_record& a, const job_record& b) { return a.id < b.id; });
    sync_dir(jobs);
    return {};
}

void store::quarantine(const std::string& dir, const std::string& name, const std::string& why,
                       store_recovery& recovery) {
    const std::string aside = options_.root + "/damaged/" + name;
    remove_all(aside);  // an earlier entry of that name kept aside: this one is newer
    if (::rename(dir.c_str(), aside.c_str()) != 0) {
        remove_all(dir);
        recovery.removed_corrupt.push_back("entries/" + name + " (" + why + "; it could not be kept aside)");
        return;
    }
    recovery.quarantined.push_back("entries/" + name + " (" + why + "): kept aside as " + aside);
}

void store::read_damaged(store_recovery& recovery) {
    std::error_code ec;
    std::vector<std::string> names;
    for (const fs::path& p : listing(options_.root + "/damaged")) {
        const std::string name = p.filename();
        if (fs::is_symlink(p, ec) || !fs::is_directory(p, ec) || !valid_entry_id(name)) {
            remove_all(p);  // not the store's
            continue;
        }
        names.push_back(name);
    }
    std::sort(names.begin(), names.end());  // the ids start with the time they were made
    while (names.size() > max_damaged) {
        remove_all(options_.root + "/damaged/" + names.front());
        recovery.removed_corrupt.push_back("damaged/" + names.front() + " (the oldest of more than " +
                                           std::to_string(max_damaged) + " damaged entries)");
        names.erase(names.begin());
    }
    for (const std::string& name : names) {
        const std::string dir = options_.root + "/damaged/" + name;
        bool lost = false;
        auto meta = read_entry(dir, name, lost);
        damaged_.push_back(
            {name, meta ? "its files read back now: move it back to entries/ by hand" : meta.error().message, dir});
    }
}

std::vector<entry_metadata> store::entries() const {
    std::vector<entry_metadata> out;
    {
        std::lock_guard lock(mu_);
        for (const auto& [id, m] : entries_) out.push_back(m);
    }
    std::sort(out.begin(), out.end(), made_after);
    return out;
}

std::optional<entry_metadata> store::find(const std::string& id) const {
    std::lock_guard lock(mu_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return std::nullopt;
    return it->second;
}

result<analysis_report> store::load_report(const std::string& id) const {
    auto meta = find(id);
    if (!meta) return fail(error_code::not_found, "no dump " + id);
    if (!meta->has_report) return fail(error_code::not_found, "dump " + id + " has no report yet");
    auto text = read_file(entry_dir(id) + "/report.json", max_report_bytes);
    if (!text) return std::unexpected(text.error());
    auto j = wire::json::parse(*text, nullptr, false);
    if (j.is_discarded()) return fail(error_code::corrupt, "the stored report of " + id + " is damaged (not JSON)");
    auto report = report_from_json(j);
    if (!report)
        return fail(error_code::corrupt, "the stored report of " + id + " is damaged: " + report.error().message);
    return report;
}

namespace {

bool valid_file_name(const std::string& name) {
    if (name.empty() || name.size() > 128 || name[0] == '.') return false;
    for (char c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
    return name != "metadata.json" && name != "report.json" && name != "dump.hprof";
}

}  // namespace

result<std::string> store::dump_path(const std::string& id) const {
    auto meta = find(id);
    if (!meta) return fail(error_code::not_found, "no dump " + id);
    if (!meta->has_dump)
        return fail(error_code::not_found, "entry " + id + " keeps no dump (a client's file was analyzed in place)");
    return entry_dir(id) + "/dump.hprof";
}

result<void> store::put_file(const std::string& id, const std::string& name, std::string_view content) {
    if (!valid_file_name(name)) return fail(error_code::bad_value, "\"" + name + "\" is not a name for a stored file");
    if (!find(id)) return fail(error_code::not_found, "no dump " + id);
    const std::string dir = entry_dir(id);
    if (auto w = write_file_atomic(dir + "/" + name, content, options_.access); !w) return w;
    std::lock_guard lock(mu_);
    if (auto it = entries_.find(id); it != entries_.end()) it->second.stored_bytes = dir_bytes(dir);
    return {};
}

result<std::string> store::get_file(const std::string& id, const std::string& name, std::size_t max_bytes) const {
    if (!valid_file_name(name) || !find(id)) return fail(error_code::not_found, "no " + name + " in dump " + id);
    return read_file(entry_dir(id) + "/" + name, max_bytes);
}

result<void> store::remove(const std::string& id) {
    if (!valid_entry_id(id)) return fail(error_code::not_found, "no dump " + id);
    {
        std::lock_guard lock(mu_);
        if (entries_.erase(id) == 0) return fail(error_code::not_found, "no dump " + id);
    }
    // Renamed to a temporary name first: a crash while removing leaves nothing that looks whole.
    const std::string dir = entry_dir(id), doomed = options_.root + "/entries/" + std::string(temp_prefix) + "rm-" + id;
    if (::rename(dir.c_str(), doomed.c_str()) != 0) return fail_errno("cannot remove", dir);
    sync_dir(options_.root + "/entries");
    remove_all(doomed);
    return {};
}

std::uint64_t store::total_bytes() const {
    std::lock_guard lock(mu_);
    std::uint64_t total = 0;
    for (const auto& [id, m] : entries_) total += m.stored_bytes;
    return total;
}

result<store::staged_entry> store::stage(entry_metadata meta) {
    std::time_t t = static_cast<std::time_t>(meta.created_ms / 1000);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", &tm);
    meta.id = std::string(stamp) + "-" + std::to_string(meta.job);
    {
        std::lock_guard lock(mu_);
        meta.sequence = ++last_sequence_;
    }
    const std::string dir = options_.root + "/entries/" + std::string(temp_prefix) + meta.id;
    remove_all(dir);
    if (auto made = make_dir(dir, options_.access); !made) return std::unexpected(made.error());
    return staged_entry(this, std::move(meta), dir);
}

store::staged_entry::staged_entry(staged_entry&& o) noexcept
    : store_(o.store_), meta_(std::move(o.meta_)), dir_(std::move(o.dir_)), done_(std::exchange(o.done_, true)) {}

store::staged_entry::~staged_entry() {
    if (!done_) remove_all(dir_);
}

result<void> store::staged_entry::write(std::string_view name, std::string_view content) {
    return write_file_atomic(path(name), content, store_->options_.access);
}

result<entry_metadata> store::staged_entry::commit() {
    std::error_code ec;
    meta_.has_report = fs::symlink_status(path("report.json"), ec).type() == fs::file_type::regular;
    meta_.has_dump = fs::symlink_status(path("dump.hprof"), ec).type() == fs::file_type::regular;
    wire::json j = to_json(meta_);
    j.erase("stored_bytes");  // measured when read
    if (auto w = write("metadata.json", j.dump(2)); !w) return std::unexpected(w.error());
    sync_dir(dir_);
    meta_.stored_bytes = dir_bytes(dir_);
    const std::string final_dir = store_->entry_dir(meta_.id);
    if (::rename(dir_.c_str(), final_dir.c_str()) != 0) return fail_errno("cannot move into place", final_dir);
    done_ = true;
    sync_dir(store_->options_.root + "/entries");
    std::lock_guard lock(store_->mu_);
    store_->entries_[meta_.id] = meta_;
    return meta_;
}

result<void> store::save_job(const job_record& job) {
    return write_file_atomic(options_.root + "/jobs/" + std::to_string(job.id) + ".json",
                             to_json(job, now_ms()).dump(2), options_.access);
}

void store::forget_job(std::uint64_t id) {
    std::string path = options_.root + "/jobs/" + std::to_string(id) + ".json";
    ::unlink(path.c_str());
}

void store::add_report_listener(report_listener listener) {
    std::lock_guard lock(mu_);
    listeners_.push_back(std::move(listener));
}

void store::report_committed(const entry_metadata& meta, const analysis_report& report) const {
    std::vector<report_listener> listeners;
    {
        std::lock_guard lock(mu_);
        listeners = listeners_;
    }
    for (const report_listener& l : listeners) l(meta, report);
}

void store::set_retention(const retention_policy& policy) {
    std::lock_guard lock(mu_);
    options_.retention = policy;
}

std::vector<std::string> store::apply_retention(std::int64_t now) {
    retention_policy policy;
    {
        std::lock_guard lock(mu_);
        policy = options_.retention;
    }
    auto doomed = expired_entries(entries(), policy, now);
    std::vector<std::string> removed;
    for (const std::string& id : doomed)
        if (remove(id)) removed.push_back(id);
    return removed;
}

result<void> store::ensure_space(std::uint64_t need, std::string_view what) const {
    return ensure_free_space(options_.root, need, options_.reserve, what);
}

result<std::uint64_t> store::space_left() const { return bytes_beyond(options_.root, options_.reserve); }

}  // namespace heapd::daemon
