#pragma once
// `heapd upload`'s work: every report heapd keeps goes to an S3-compatible bucket, oldest first,
// under PREFIX/HOST/MAIN CLASS/DUMP ID/ (report.json; report.html; dump.hprof.gz, the dump stripped
// and compressed, when asked; summary.json, what heapd fleet reads, last), and every death record
// under PREFIX/HOST/MAIN CLASS/DEATH ID/death.json. It reads the store and never writes there: it
// runs as its own process (heapd-upload.service: network, no privileges) so that dumps and analyses
// never wait for it. A failed entry is tried again later (backoff from 5 s to 10 min), from where
// it stopped.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "daemon/config/config.h"
#include "daemon/store/entry_metadata.h"
#include "daemon/upload/s3_client.h"
#include "daemon/upload/upload_state.h"
#include "formats/report/report.h"

namespace heapd::daemon {

// What the uploader has done since it started, for its metrics.
struct upload_counters {
    std::uint64_t objects = 0;       // files put in the bucket
    std::uint64_t bytes = 0;         // their bytes
    std::uint64_t parts = 0;         // multipart parts sent
    std::uint64_t entries_done = 0;  // store entries whose files are all in the bucket
    std::uint64_t failures = 0;      // failed attempts
    std::uint64_t entries_gone = 0;  // left the store before they could be uploaded
    std::uint64_t queued = 0;        // entries waiting, after the last pass
    std::int64_t last_success_ms = 0;
};

// A text safe as one path segment of a key: letters, digits, '.', '_' and '-' (others become '_'),
// at most 128 bytes, never "", "." or "..".
std::string key_segment(std::string_view text);
// The service of a JVM whose main class (or jar) is main_class, as a key names it: of a jar, the
// jar's file name.
std::string fleet_service_name(std::string_view main_class);
// The service a JVM is one instance of, as a key names it: in Kubernetes its pod's workload, else
// its container's name (container_identity.h's workload), else fleet_service_name(main_class).
std::string fleet_service_key(std::string_view main_class, const wire::json& container);
// The service an entry is of: fleet_service_key of its command's main class and its container.
std::string fleet_service_of(const entry_metadata& meta);
// PREFIX/HOST/SERVICE/ID of a dump (or, with the record's main class, of a death record): one
// place for a JVM's reports and its death; without a prefix, HOST/SERVICE/ID.
std::string entry_key_base(const std::string& prefix, const entry_metadata& meta);
std::string key_base(const std::string& prefix, std::string_view host, std::string_view main_class, std::string_view id,
                     const wire::json& container = wire::json::object());
// The credentials file the options name, else the one systemd passes ($CREDENTIALS_DIRECTORY/s3);
// "" when neither.
std::string credentials_file_of(const upload_options& o);
// The credentials file: "KEY:SECRET" on one line, or aws_access_key_id = / aws_secret_access_key =
// lines (as in ~/.aws/credentials); refused when others may read it.
result<std::pair<std::string, std::string>> read_credentials(const std::string& path);

class uploader {
public:
    uploader(upload_options options, std::string store_dir, upload_state state, std::unique_ptr<s3_client> client,
             std::shared_ptr<spdlog::logger> log);

    // One pass over the store: each entry with a report not in the bucket yet and due, oldest
    // first, until stop is set. Returns the entries still waiting.
    std::size_t run_pass(const std::atomic<bool>& stop);
    const upload_counters& counters() const { return counters_; }
    // Try failed entries now rather than when their backoff ends (heapd upload --once).
    void set_ignore_backoff(bool ignore) { ignore_backoff_ = ignore; }
    // The counters in the Prometheus text format.
    std::string metrics_text() const;

private:
    // One file to put in the bucket under KEY BASE/name, from path (made first when missing).
    struct wanted_file {
        std::string name, path, type;
    };
    // Uploads what is missing of one entry; false when it failed (progress kept for the next try).
    bool upload_entry(const entry_metadata& meta, const std::atomic<bool>& stop);
    // Uploads what is missing of the files of one item (a store entry: meta, whose missing files are
    // made; a death record: its one file, meta null) under key_base, and marks it done.
    bool upload_files(const std::string& id, const std::string& key_base, const std::vector<wanted_file>& files,
                      const entry_metadata* meta, const std::atomic<bool>& stop);
    // One file: whole when it fits in a part, else in parts (resuming a multipart upload).
    s3_result<void> upload_file(entry_progress& p, file_progress& f, const std::string& path,
                                const std::string& content_type, const std::atomic<bool>& stop);
    // The entry's report.json, read back.
    result<analysis_report> stored_report(const std::string& id) const;
    result<std::string> make_html(const entry_metadata& meta, const std::string& out_path) const;
    // summary.json: the report as heapd fleet keeps it (formats/report/fleet_entry.h).
    result<std::string> make_summary(const entry_metadata& meta, const std::string& key_base,
                                     const std::string& out_path) const;
    std::string entry_dir(const std::string& id) const { return store_dir_ + "/entries/" + id; }

    upload_options options_;
    std::string store_dir_;
    upload_state state_;
    std::unique_ptr<s3_client> client_;
    std::shared_ptr<spdlog::logger> log_;
    upload_counters counters_;
    bool ignore_backoff_ = false;
};

}  // namespace heapd::daemon
