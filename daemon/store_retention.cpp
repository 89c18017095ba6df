#include "store_retention.h"

#include <algorithm>

namespace heapd::daemon {

std::vector<std::string> expired_entries(std::vector<entry_metadata> entries, const retention_policy& policy,
                                         std::int64_t now_ms) {
    // Newest first; ties by id so the order does not depend on the input's.
    std::sort(entries.begin(), entries.end(), [](const entry_metadata& a, const entry_metadata& b) {
        return a.created_ms != b.created_ms ? a.created_ms > b.created_ms : a.id > b.id;
    });
    const std::int64_t max_age_ms = static_cast<std::int64_t>(std::min<std::uint64_t>(policy.max_age_days, 1u << 20)) *
                                    24 * 3600 * 1000;
    std::vector<std::string> out;
    std::uint64_t kept = 0, kept_bytes = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const entry_metadata& e = entries[i];
        bool keep = i == 0;
        if (!keep) {
            bool too_old = policy.max_age_days != 0 && now_ms - e.created_ms > max_age_ms;
            bool too_many = policy.max_count != 0 && kept + 1 > policy.max_count;
            bool too_big = policy.max_bytes != 0 && kept_bytes + e.stored_bytes > policy.max_bytes;
            keep = !too_old && !too_many && !too_big;
        }
        if (keep) {
            ++kept;
            kept_bytes += e.stored_bytes;
        } else {
            out.push_back(e.id);
        }
    }
    return out;
}

} // namespace heapd::daemon
