#pragma once
// Where `heapd fleet` finds reports: the S3 bucket `heapd upload` fills, or a local directory laid
// out the same way (PREFIX/HOST/SERVICE/ID/summary.json, report.json, report.html), for tests and for
// buckets synced elsewhere. Both list every report directory with a version that changes when its
// file does, so that what was read before need not be read again.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/unique_fd.h"
#include "daemon/upload/s3_client.h"

namespace heapd::daemon {

// A report directory: its key (no trailing '/'), the file that describes it ("summary.json", or
// "report.json" for a report uploaded without a summary) and that file's version and size.
struct fleet_listed {
    std::string key, file, version;
    std::uint64_t size = 0;
};

// A place holding reports.
class fleet_source {
public:
    virtual ~fleet_source() = default;
    // Every report directory, by key.
    virtual result<std::vector<fleet_listed>> list() = 0;
    // The listed file's bytes, at most max_bytes. Callers on different threads pass different
    // workers (0 to readers() - 1): each has a connection of its own.
    virtual result<std::string> read(const fleet_listed& item, std::size_t max_bytes, unsigned worker) = 0;
    // How many workers may read at once.
    virtual unsigned readers() const = 0;
    // "s3://BUCKET/PREFIX" or the directory: names the index and the output.
    virtual std::string describe() const = 0;
    // Where a report's page is, for a link (base + key + "/report.html" when a base is given).
    virtual std::string page_link(const std::string& key, const std::string& base) const = 0;
};

// At most this many report directories are kept from a listing (the rest is an error, not dropped).
inline constexpr std::size_t max_fleet_reports = 1'000'000;

// The reports under prefix in a bucket, read over up to connections connections at once.
std::unique_ptr<fleet_source> bucket_source(const s3_target& target, std::string prefix, unsigned connections);
// The reports under a directory: walked without following links (at most 8 levels), each file opened
// beneath it, never through a link, and checked to be a regular file; read by up to readers workers.
result<std::unique_ptr<fleet_source>> directory_source(const std::string& dir, unsigned readers);

}  // namespace heapd::daemon
