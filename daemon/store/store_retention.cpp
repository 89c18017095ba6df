#include "daemon/store/store_retention.h"

#include <algorithm>
#include <map>

namespace heapd::daemon {
namespace {

// What an owner keeps while the policy is applied: its entries, newest first, and their sums.
struct owner_share {
    std::vector<std::size_t> entries;  // indexes into the sorted entries
    std::uint64_t count = 0, bytes = 0;
};

}  // namespace

std::vector<std::string> expired_entries(std::vector<entry_metadata> entries, const retention_policy& policy,
                                         std::int64_t now_ms) {
    // Newest first by the store's sequence, never by the clock (which may step back: the entry just
    // made would then look the oldest); ties by time and id, so the order does not depend on the input's.
    std::sort(entries.begin(), entries.end(), made_after);
    const std::int64_t max_age_ms =
        static_cast<std::int64_t>(std::min<std::uint64_t>(policy.max_age_days, 1u << 20)) * 24 * 3600 * 1000;
    std::vector<bool> gone(entries.size(), false);
    std::map<uid_t, owner_share> owners;
    std::uint64_t count = 0, bytes = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        // The newest entry of the store is always kept, however large or old.
        if (i != 0 && policy.max_age_days != 0 && now_ms - entries[i].created_ms > max_age_ms) {
            gone[i] = true;
            continue;
        }
        owner_share& o = owners[entries[i].owner_uid];
        o.entries.push_back(i);
        ++o.count;
        o.bytes += entries[i].stored_bytes;
        ++count;
        bytes += entries[i].stored_bytes;
    }
    // The owner's entry to remove next: its oldest not taken for an OutOfMemoryError, else its
    // oldest; never the store's newest, nor (keep_newest) the owner's own newest.
    auto victim = [&](const owner_share& o, bool keep_newest) -> std::optional<std::size_t> {
        std::optional<std::size_t> oldest, oldest_plain;
        for (std::size_t k = o.entries.size(); k-- > (keep_newest ? 1u : 0u);) {
            const std::size_t i = o.entries[k];
            if (gone[i] || i == 0) continue;
            if (!oldest) oldest = i;
            if (!oldest_plain && entries[i].trigger != "oom") oldest_plain = i;
        }
        return oldest_plain ? oldest_plain : oldest;
    };
    auto remove = [&](owner_share& o, std::size_t i) {
        gone[i] = true;
        --o.count;
        o.bytes -= entries[i].stored_bytes;
        --count;
        bytes -= entries[i].stored_bytes;
    };
    // Each owner within its own share, so that no one's entries push out another's.
    for (auto& [uid, o] : owners)
        while ((policy.max_count_per_owner != 0 && o.count > policy.max_count_per_owner) ||
               (policy.max_bytes_per_owner != 0 && o.bytes > policy.max_bytes_per_owner)) {
            auto i = victim(o, true);
            if (!i) break;
            remove(o, *i);
        }
    // Then the store within its limits, taking from whoever holds the most.
    for (;;) {
        const bool over_count = policy.max_count != 0 && count > policy.max_count;
        const bool over_bytes = policy.max_bytes != 0 && bytes > policy.max_bytes;
        if (!over_count && !over_bytes) break;
        owner_share* largest = nullptr;
        std::optional<std::size_t> pick;
        for (auto& [uid, o] : owners) {
            auto i = victim(o, false);
            if (!i) continue;
            const bool larger =
                largest == nullptr || (over_bytes ? o.bytes > largest->bytes : o.count > largest->count);
            if (larger) largest = &o, pick = i;
        }
        if (!pick) break;
        remove(*largest, *pick);
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < entries.size(); ++i)
        if (gone[i]) out.push_back(entries[i].id);
    return out;
}

}  // namespace heapd::daemon
