#pragma once
// The daemon's store (default /var/lib/heapd): one directory per dump or analyzed file, job records,
// and a scratch directory. Layout:
//   ROOT/lock                      held (flock) by the one daemon using the store
//   ROOT/entries/ID/metadata.json  entry_metadata
//   ROOT/entries/ID/report.json    the full analysis report (formats/report/report_json.h)
//   ROOT/entries/ID/dump.hprof     the dump, for entries made by a dump job
//   ROOT/jobs/JOB.json             job records (job.h)
//   ROOT/deaths/ID.json            records of JVMs' deaths, kept by daemon/deaths/death_store.h
//   ROOT/tmp/                      scratch (inflated copies of compressed dumps), emptied at start
//   ROOT/staging/JOB.json          dumps a JVM writes in its /tmp for a job (staging_journal.h)
//   ROOT/intake/UID-ID.json        OOM requests taken and not yet kept (daemon/oom/oom_intake.h)
// Every file is written atomically (atomic_file.h) with mode 0640 and the store's group; an entry is
// assembled in ROOT/entries/.tmp-ID and renamed into place whole. Opening the store removes
// whatever is half-written, entries that cannot be read, and marks interrupted jobs failed.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/keyed_hash.h"
#include "base/unique_fd.h"
#include "daemon/store/entry_metadata.h"
#include "daemon/store/free_space.h"
#include "daemon/store/job_record.h"
#include "daemon/store/store_retention.h"
#include "formats/report/report.h"

namespace heapd::daemon {

// Where the store is and how it writes and keeps things.
struct store_options {
    std::string root;
    file_access access;  // mode and group of everything written
    retention_policy retention;
    disk_reserve reserve;  // free space the free-space guard leaves untouched
};

// What opening the store found and repaired.
struct store_recovery {
    unsigned removed_temp = 0;                 // half-written files and directories removed
    std::vector<std::string> removed_corrupt;  // entries and job records that could not be read, removed
    std::vector<std::string> quarantined;      // entries whose metadata could not be read: moved to damaged/
    std::vector<std::string> repaired;         // entries kept without a file found missing (their damage)
    std::vector<job_record> jobs;              // job records read back, oldest first
    unsigned interrupted = 0;                  // of them, jobs that were queued or running: now failed
};

// An entry whose metadata could not be read, kept aside in the store's damaged/ folder, its files
// untouched, for someone to look at: no owner is known, so only root and the heapd group see it.
struct damaged_entry {
    std::string id;    // its folder's name
    std::string why;   // what is wrong with it
    std::string path;  // where its files are
};

// True for ids the store makes (letters, digits, '-', at most 64): never a path.
bool valid_entry_id(std::string_view id);

// The store; thread-safe.
class store {
public:
    // Creates the layout when missing, takes the lock, and recovers from an earlier crash.
    static result<std::unique_ptr<store>> open(const store_options& options, store_recovery& recovery);

    const std::string& root() const { return options_.root; }
    // A secret of this store (made once, kept in its file "key", mode 0600): heapd tags the names
    // it gives JVMs with it (arm_jvm.h), to know them again after a restart.
    const hash_key& key() const { return key_; }
    std::string tmp_dir() const { return options_.root + "/tmp"; }
    // The free space left on the store's disk (by its guard, and by analyses spilling in tmp_dir).
    const disk_reserve& reserve() const { return options_.reserve; }
    std::string staging_dir() const { return options_.root + "/staging"; }
    const store_options& options() const { return options_; }

    // Entries, newest first.
    std::vector<entry_metadata> entries() const;
    std::optional<entry_metadata> find(const std::string& id) const;
    // Entries kept aside as damaged (at most max_damaged, the oldest removed first), oldest first.
    static constexpr std::size_t max_damaged = 16;
    const std::vector<damaged_entry>& damaged() const { return damaged_; }
    // The entry's report, read and checked; a damaged one is an error, never served.
    result<analysis_report> load_report(const std::string& id) const;
    result<void> remove(const std::string& id);
    // The entry's dump file (dump.hprof), for entries made by a dump job: not_found otherwise.
    result<std::string> dump_path(const std::string& id) const;
    // A file kept in an entry beside its report (the answer of a path query, say); names are
    // letters, digits, '-', '_' and '.', not starting with '.'. Written atomically.
    result<void> put_file(const std::string& id, const std::string& name, std::string_view content);
    // Such a file's contents, at most max_bytes; not_found when the entry or the file is missing.
    result<std::string> get_file(const std::string& id, const std::string& name, std::size_t max_bytes) const;
    std::uint64_t total_bytes() const;

    // An entry being written in a staging directory; commit() puts it in place whole, and one
    // dropped before that leaves nothing behind.
    class staged_entry {
    public:
        staged_entry(staged_entry&&) noexcept;
        staged_entry& operator=(staged_entry&&) = delete;
        ~staged_entry();
        // The path a file of the entry is written to before commit (for big files written directly).
        std::string path(std::string_view name) const { return dir_ + "/" + std::string(name); }
        result<void> write(std::string_view name, std::string_view content);
        // The metadata commit() writes, to complete while the entry is assembled.
        entry_metadata& metadata() { return meta_; }
        // Writes metadata.json (with the sizes measured) and renames the entry into place.
        result<entry_metadata> commit();

    private:
        friend class store;
        staged_entry(store* s, entry_metadata meta, std::string dir)
            : store_(s), meta_(std::move(meta)), dir_(std::move(dir)) {}
        store* store_;
        entry_metadata meta_;
        std::string dir_;
        bool done_ = false;
    };
    // Starts a new entry; meta.id is set here from its time and job.
    result<staged_entry> stage(entry_metadata meta);

    // Job records: written on every change of state, removed when the job is forgotten.
    result<void> save_job(const job_record& job);
    void forget_job(std::uint64_t id);

    // Told of each report entry a job commits, with its report (journal events, uploads); called on
    // the job's thread after the entry is in place, so a listener must not block for long.
    using report_listener = std::function<void(const entry_metadata&, const analysis_report&)>;
    void add_report_listener(report_listener listener);
    // What a job calls once it has committed an entry with a report: tells every listener.
    void report_committed(const entry_metadata& meta, const analysis_report& report) const;

    // Lets another daemon use the store (its lock released): once nothing writes to it any more.
    void release() { lock_.reset(); }

    // Replaces the retention policy (a configuration reloaded); apply_retention then follows it.
    void set_retention(const retention_policy& policy);
    // Removes the entries the retention policy no longer keeps; returns their ids.
    std::vector<std::string> apply_retention(std::int64_t now);
    // The free-space guard for the store's file system (see free_space.h).
    result<void> ensure_space(std::uint64_t need, std::string_view what) const;
    // The bytes that may still be written before the guard refuses (free space less the reserve).
    result<std::uint64_t> space_left() const;

private:
    explicit store(store_options options) : options_(std::move(options)) {}
    result<void> recover(store_recovery& recovery);
    // Moves an entry whose metadata cannot be read to damaged/ (why: what is wrong with it).
    void quarantine(const std::string& dir, const std::string& name, const std::string& why, store_recovery& recovery);
    // Reads damaged/ back, and removes the oldest beyond max_damaged.
    void read_damaged(store_recovery& recovery);
    std::string entry_dir(const std::string& id) const { return options_.root + "/entries/" + id; }

    result<void> load_key();

    store_options options_;
    unique_fd lock_;
    hash_key key_{};
    mutable std::mutex mu_;
    std::map<std::string, entry_metadata> entries_;
    std::vector<damaged_entry> damaged_;  // from the start (recover); not changed after
    std::uint64_t last_sequence_ = 0;     // the highest entry_metadata::sequence given
    std::vector<report_listener> listeners_;
};

}  // namespace heapd::daemon
