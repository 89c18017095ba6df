#pragma once
// The OOM intake: every OutOfMemoryError dump request the daemon has taken (from a hook over its
// socket, from the spool, or a dump it collected itself) and not yet made into a store entry, one record each in the
// store (ROOT/intake/KEY.json). A record is written before the hook is acknowledged or the spool file is removed, and
// removed only once the entry is kept or the request is given up for good; until then the dump the JVM wrote stays
// where it lies. So a stop, a crash, a refusal or a full queue loses no OOM: at start the daemon takes every record
// again.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {

// One OOM request taken and not yet done with.
struct intake_record {
    std::string key;  // intake_key(): who wrote it and the request's id
    uid_t writer_uid = 0;
    gid_t writer_gid = 0;
    wire::json args = wire::json::object();  // the dump request's arguments
    std::int64_t received_ms = 0;
    unsigned attempts = 0;   // jobs started for it so far (counted before each starts)
    std::string last_error;  // why the last one failed
    // The dump the request names, once opened: heapd's armed file is removed at the end only when
    // its name still leads to this very file.
    std::uint64_t dump_dev = 0, dump_ino = 0;
    // Collected by the daemon itself from a JVM without heapd's hook (dump_collector.h): the writer
    // is the JVM's user, and the daemon's word that the dump is that JVM's is taken.
    bool collected = false;
};

wire::json to_json(const intake_record& r);
result<intake_record> intake_record_from_json(const wire::json& j);

// A request id as the hook makes it: 32 random hex digits.
std::string new_request_id();
// The key of a request: its writer and its id ("UID-ID"); nullopt when the id is not 1 to 48 of
// letters, digits, '-' and '_' (an id from a request is the writer's word, never a path).
std::optional<std::string> intake_key(uid_t writer, std::string_view request_id);

// The records of one directory. Used from the io_context thread only.
class oom_intake {
public:
    // Records kept at once, in all and of one writer: a user's flood of requests cannot crowd out
    // another's; past either, keep() refuses (busy) and the request stays in the spool.
    static constexpr std::size_t max_records = 1024;
    static constexpr std::size_t max_per_writer = 128;

    // Creates the directory when missing and reads what is in it (records that cannot be read are
    // removed and named in problems).
    static result<oom_intake> open(const std::string& dir, const file_access& access,
                                   std::vector<intake_record>& records, std::vector<std::string>& problems);
    bool contains(const std::string& key) const { return writers_.contains(key); }
    std::size_t size() const { return writers_.size(); }
    // Writes (or rewrites) the record, durably, before returning.
    result<void> keep(const intake_record& r);
    // The request is done with: its record goes.
    void drop(const std::string& key);

private:
    oom_intake(std::string dir, file_access access) : dir_(std::move(dir)), access_(access) {}
    std::string path_of(const std::string& key) const { return dir_ + "/" + key + ".json"; }
    std::string dir_;
    file_access access_;
    std::map<std::string, uid_t> writers_;  // key -> writer
    std::map<uid_t, std::size_t> per_writer_;
};

}  // namespace heapd::daemon
