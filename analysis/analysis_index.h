#pragma once
// The analysis index: a file beside a dump (DUMP.heapd-index) holding the full results of its
// analysis, so a second analysis of the same dump reads them instead of rebuilding the object
// graph. It is written atomically (temp file, fsync, rename) and ignored unless the dump still
// has the size, modification time and head-and-tail hash it was made from, the index format
// version is this one, and it was made with the same analysis options.
#include <cstdint>
#include <optional>
#include <string>

#include "analysis/analysis.h"
#include "base/error.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace analysis {

// What identifies a dump file's contents cheaply: size, mtime and a hash of its first and last
// 64 KiB (a rewritten dump of the same size and mtime would still differ there).
struct dump_identity {
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::uint64_t edge_hash = 0;
    bool operator==(const dump_identity&) const = default;
};

// Reads the identity of the file at path (the file as stored, compressed or not).
result<dump_identity> identify_dump(const std::string& path);

// Where the index of a dump lives: beside it, or in dir when dir is not empty.
std::string index_path(const std::string& dump_path, const std::string& dir = {});

// The options that change what an analysis finds, as the index records them. top is not among
// them: the index keeps the whole histogram and a report is cut to top when read.
std::string index_options_key(const analysis_options& options);

// The indexed report when the index matches the dump and the options; nullopt when there is no
// index or it does not match (a stale or damaged index is not an error, just not used).
std::optional<analysis_report> load_index(const std::string& index_file, const dump_identity& dump,
                                          const std::string& options_key);

// Writes the report (made with options whose key is options_key, top = 0) as the dump's index.
result<void> save_index(const std::string& index_file, const dump_identity& dump, const std::string& options_key,
                        const analysis_report& report);

}  // namespace analysis
}  // namespace heapd
