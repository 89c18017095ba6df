#pragma once
// Retention of the store: how many entries, how many bytes and how old they may be.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "daemon/store/entry_metadata.h"

namespace heapd::daemon {

// Limits on what the store keeps; 0 means no limit of that kind.
struct retention_policy {
    std::uint64_t max_count = 50;
    std::uint64_t max_bytes = 0;
    std::uint64_t max_age_days = 30;
    std::uint64_t max_count_per_owner = 20;  // entries of one owner (uid)
    std::uint64_t max_bytes_per_owner = 0;
};

// The ids of the entries to remove so the rest keep within the policy, newest first (made_after:
// by the store's sequence, not the wall clock). Entries older
// than the age limit go; then each owner is brought within its own share (its newest entry kept),
// so that one user's entries never push out another's; then, while the store is over its count or
// bytes, the owner holding the most gives up an entry. An owner's oldest entry goes first, those
// taken for an OutOfMemoryError last of all. The store's newest entry is always kept, however large.
std::vector<std::string> expired_entries(std::vector<entry_metadata> entries, const retention_policy& policy,
                                         std::int64_t now_ms);

}  // namespace heapd::daemon
