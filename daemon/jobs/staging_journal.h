#pragma once
// Dumps a dump job asked a JVM to write in the JVM's own /tmp, noted in the store
// (ROOT/staging/JOB.json) until the job is done with them. The attach helper removes a staged file
// on every path it lives through; a daemon killed together with its helper (systemd stops the
// whole service) cannot, so its next start removes what the notes name.
#include <cstdint>
#include <string>
#include <vector>

#include "attach/heap_dump.h"
#include "base/atomic_file.h"
#include "base/error.h"

namespace heapd::daemon {

// The notes in one directory of the store.
class staging_journal {
public:
    staging_journal(std::string dir, file_access access) : dir_(std::move(dir)), access_(access) {}
    // Notes that job's JVM is about to write staged.
    result<void> note(std::uint64_t job, const attach::staged_dump& staged) const;
    // The job is done with its staged dump (copied and removed, or never written).
    void done(std::uint64_t job) const;
    // At start: removes every noted dump still there, and the notes; the names removed.
    std::vector<std::string> clean_up() const;

private:
    std::string path_of(std::uint64_t job) const { return dir_ + "/" + std::to_string(job) + ".json"; }
    std::string dir_;
    file_access access_;
};

}  // namespace heapd::daemon
