#pragma once
// The spool: dump requests the OOM hook could not hand to the daemon (it was not running, or did not
// acknowledge in time), one JSON file each in a directory anyone may write to but not list (mode
// 1733), taken by the daemon when it starts and whenever one is added. A request is the `dump`
// request's arguments; the file's owner is who asked. A file stays until the daemon has the request
// in its OOM intake (oom_intake.h).
#include <sys/types.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {

// The spool directory: --spool, else $HEAPD_SPOOL, else /var/spool/heapd.
std::string default_spool_dir();

// Writes args as a new spool file (temporary name, then rename); returns its path.
result<std::string> spool_request(const std::string& dir, const wire::json& args);

// One request read back from the spool, and who wrote it.
struct spooled_request {
    std::string path;
    uid_t writer_uid = 0;
    gid_t writer_gid = 0;
    wire::json args;
};

// Creates the spool directory (mode 1733) when missing; makes an existing one so.
result<void> make_spool_dir(const std::string& dir);
// Reads every request of the spool (at most max_requests), leaving the files in place; files that
// are no request are removed and reported in problems; files still being written (.tmp-*) are left
// alone.
std::vector<spooled_request> read_spool(const std::string& dir, std::vector<std::string>& problems,
                                        std::size_t max_requests = 4096);
// Removes a request's file once the daemon holds the request.
void remove_spooled(const spooled_request& request);
// The request's id: the one the hook gave it, else one made of the file's name.
std::string spooled_request_id(const spooled_request& request);

}  // namespace heapd::daemon
