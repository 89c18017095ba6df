#pragma once
// Retention of the store: how many entries, how many bytes and how old they may be.
#include <cstdint>
#include <string>
#include <vector>

#include "entry_metadata.h"

namespace heapd::daemon {

// Limits on what the store keeps; 0 means no limit of that kind.
struct retention_policy {
    std::uint64_t max_count = 50;
    std::uint64_t max_bytes = 0;
    std::uint64_t max_age_days = 30;
};

// The ids of the entries to remove so the rest keep within the policy. From the newest on, an entry
// is kept when it is young enough and the entries kept with it stay within the count and the bytes.
// The newest entry is always kept, however large.
std::vector<std::string> expired_entries(std::vector<entry_metadata> entries, const retention_policy& policy,
                                         std::int64_t now_ms);

} // namespace heapd::daemon
