#pragma once
// A process's mappings as /proc/PID/smaps describes them: each range with its permissions, what
// backs it and how much of it is resident, read from the text the kernel writes.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace heapd {
inline namespace memory {

// A range of addresses, [begin, end).
struct address_range {
    std::uint64_t begin = 0, end = 0;
    bool contains(std::uint64_t address) const { return address >= begin && address < end; }
    bool overlaps(const address_range& o) const { return begin < o.end && o.begin < end; }
};

// One mapping of the process. Memory: about 80 bytes and its path.
struct mapping {
    address_range range;
    char perms[5] = "----";       // "rw-p", "r-xp", "rwxp", "---p" ...
    std::string path;             // the file, a "[heap]"/"[stack]"/"[vdso]" name, or "" (anonymous)
    std::uint64_t rss = 0;        // bytes resident
    std::uint64_t anonymous = 0;  // bytes resident that no file backs
    std::uint64_t swap = 0;       // bytes swapped out
    // Backed by a file (a path that is no [name]).
    bool file_backed() const { return !path.empty() && path.front() != '['; }
};

// At most this many mappings are kept from one smaps text (a JVM with 20,000 threads has about
// 45,000); beyond it the text is refused.
inline constexpr std::size_t max_mappings = 1u << 20;

// Parses /proc/PID/smaps. Errors: bad_format naming the line (a header that is no mapping, a field
// that is no number, more than max_mappings).
result<std::vector<mapping>> parse_smaps(std::string_view text);

// The sums over every mapping: what /proc/PID/smaps_rollup says.
struct smaps_totals {
    std::uint64_t rss = 0, anonymous = 0, swap = 0;
    std::uint64_t file_rss = 0;  // resident in file-backed mappings
};
smaps_totals totals_of(const std::vector<mapping>& mappings);

// The resident bytes of the mappings that overlap any of ranges (a mapping counts whole: HotSpot
// maps its heap and code cache as mappings of their own).
std::uint64_t resident_in(const std::vector<mapping>& mappings, const std::vector<address_range>& ranges);

}  // namespace memory
}  // namespace heapd
