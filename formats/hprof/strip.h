#pragma once
// `heapd strip`: a copy of a dump that can leave the host without its data.
#include <cstdint>
#include <span>

#include "base/error.h"

namespace heapd {
inline namespace hprof {

// What to keep readable in the stripped copy.
struct strip_options {
    bool keep_strings = false;  // leave the contents of java.lang.String value arrays in place
};

// What strip_dump changed.
struct strip_stats {
    std::uint64_t arrays_zeroed = 0;
    std::uint64_t bytes_zeroed = 0;
    std::uint64_t strings_kept = 0;
    std::uint64_t bytes_written = 0;
    bool truncated = false;  // the input was cut short; its unreadable tail was left out
};

// Writes to out_fd a copy of the dump with every primitive array's contents zeroed (lengths,
// records and references unchanged), so sizes, shapes and the object graph stay analysable.
// Refuses a dump whose heap records are damaged (their unparsed bytes could hold data); a truncated
// dump is copied up to its last whole sub-record.
result<strip_stats> strip_dump(std::span<const std::byte> dump, int out_fd, const strip_options& options);

}  // namespace hprof
}  // namespace heapd
