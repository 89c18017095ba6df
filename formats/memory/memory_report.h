#pragma once
// A JVM's memory breakdown as JSON (heapd memory --json, the daemon's reply, heapctl) and as text
// for people.
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "formats/memory/jvm_memory.h"

namespace heapd {
inline namespace memory {

using memory_json = nlohmann::ordered_json;

// {"pid", "at_ms", "resident", "anonymous", "file_resident", "swap", "limit": {...}, "percent_of_limit",
//  "parts": [{"name", "resident", "committed", "used", "count", "source"}], "nmt": {...}, "notes": [...]}:
// absent figures are left out.
memory_json to_json(const memory_breakdown& b);
// The breakdown back from to_json's form. Errors: bad_value naming the field.
result<memory_breakdown> breakdown_from_json(const memory_json& j);

// The cell of the jvms tables: "201 MiB/256 MiB 79%" against a cgroup's limit, "201 MiB" against
// the host's memory.
std::string rss_limit_cell(std::int64_t resident, std::optional<std::int64_t> limit, bool by_cgroup);

// The breakdown as a table, one part a line, then Native Memory Tracking's categories where on.
// Text that came from the host (cgroup paths) is made safe for a terminal.
std::string memory_text(const memory_breakdown& b);

// The n parts holding the most resident memory, largest first, on one line: "Other native 150 MiB,
// Java heap 41 MiB, Thread stacks 9.6 MiB"; "" when none has a resident figure.
std::string largest_parts_text(const memory_breakdown& b, std::size_t n);

}  // namespace memory
}  // namespace heapd
