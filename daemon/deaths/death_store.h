#pragma once
// The records of JVMs' deaths, kept beside the store's entries and apart from them (so that deaths
// never count against the retention of dumps): ROOT/deaths/ID.json, one file each, written
// atomically with the store's mode and group; at most max_records: beyond it, the oldest record of
// the owner who has the most goes first, so that one user's many deaths push out only their own.
#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"
#include "daemon/deaths/death_record.h"
#include "daemon/store/store.h"

namespace heapd::daemon {

// The deaths kept; thread-safe.
class death_log {
public:
    // Creates dir when missing (the store's "deaths" folder: store_root + "/deaths").
    static result<std::unique_ptr<death_log>> open(std::string dir, file_access access, std::size_t max_records = 1000);

    // Fills r.kept with the store's entries of that JVM (its host, pid and start time; newest
    // first), writes the record and removes, beyond max_records, the oldest of the owner who has the
    // most; the record's id.
    result<std::string> keep(const store& s, death_record& r);
    // A dump taken at a JVM's OutOfMemoryError (trigger "oom") is kept: the record of that JVM's
    // death, when there is one without such a dump, names it (the JVM often dies before its dump
    // is stored; keep() names one stored before). The record's id, or "" when there is none.
    result<std::string> note_oom_dump(const entry_metadata& dump);

    // The records of the JVMs whose owner may_see accepts, newest first, each {"id", "death"}.
    std::vector<wire::json> list(const std::function<bool(uid_t)>& may_see) const;

private:
    death_log(std::string dir, file_access access, std::size_t max_records)
        : dir_(std::move(dir)), access_(access), max_records_(max_records) {}
    // The records' ids, oldest first.
    std::vector<std::string> ids() const;
    // Removes records beyond max_records, the most numerous owner's oldest first (mu_ held).
    void trim();

    const std::string dir_;
    const file_access access_;
    const std::size_t max_records_;
    mutable std::mutex mu_;
    std::map<std::string, uid_t> owners_;  // each record's owner by id (oldest first), read at open
};

}  // namespace heapd::daemon
