#pragma once
// The spool: dump requests the OOM hook could not hand to the daemon (it was not running), one
// JSON file each in a directory anyone may write to but not list (mode 1733), taken by the daemon
// when it starts. A request is the `dump` request's arguments; the file's owner is who asked.
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
// Reads every request of the spool and removes its file (unreadable ones are removed as well and
// reported in problems); files still being written (.tmp-*) are left alone.
std::vector<spooled_request> take_spool(const std::string& dir, std::vector<std::string>& problems);

}  // namespace heapd::daemon
