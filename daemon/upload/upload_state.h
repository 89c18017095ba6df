#pragma once
// What `heapd upload` has done, kept in its state directory across restarts: a marker per store
// entry whose files are all in the bucket (done/ID), the progress of each entry under way
// (pending/ID.json, written atomically after every file and every part: files done, for a file
// sent in parts its multipart upload's id and the parts the server has, attempts and when to try
// again), and the files made for it (work/ID.*: the stripped, compressed dump). An upload resumes
// where it stopped; nothing is uploaded under another key.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "daemon/upload/s3_client.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {

// One file of an entry: whether it is in the bucket, and for one sent in parts, how far.
struct file_progress {
    std::string name;  // "report.json", "report.html", "dump.hprof.gz"
    bool done = false;
    std::uint64_t size = 0;  // bytes, once known
    std::string upload_id;   // a multipart upload under way
    std::vector<s3_part> parts;
};

// One store entry on its way to the bucket.
struct entry_progress {
    std::string dump_id;
    std::string key_base;  // PREFIX/HOST/MAIN CLASS/DUMP ID
    std::vector<file_progress> files;
    unsigned attempts = 0;  // failed attempts in a row
    std::int64_t next_attempt_ms = 0;
    std::string last_error;

    // The file's progress, added when missing.
    file_progress& file(std::string_view name);
};

wire::json to_json(const entry_progress& p);
result<entry_progress> progress_from_json(const wire::json& j);

// The state directory (made 0700 when missing; a link to it, as systemd makes for DynamicUser=, is
// followed once).
class upload_state {
public:
    static result<upload_state> open(const std::string& dir);

    bool is_done(const std::string& id) const;
    // Marks the entry done and removes its progress and work files.
    result<void> mark_done(const std::string& id);
    std::optional<entry_progress> load(const std::string& id) const;
    result<void> save(const entry_progress& p) const;
    // Removes what is kept of an entry that went from the store before it was uploaded.
    void forget(const std::string& id) const;
    // Entries under way (pending/ID.json), and entries done.
    std::vector<std::string> pending() const;
    std::vector<std::string> done() const;
    // Forgets that an entry is done (it left the store).
    void forget_done(const std::string& id) const;
    // Where a file made for an entry is kept until it is uploaded, and that directory.
    std::string work_path(const std::string& id, std::string_view name) const;
    std::string work_dir() const { return dir_ + "/work"; }

private:
    explicit upload_state(std::string dir) : dir_(std::move(dir)) {}
    std::string dir_;
};

}  // namespace heapd::daemon
