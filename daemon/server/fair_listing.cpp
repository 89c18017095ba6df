#include "daemon/server/fair_listing.h"

#include <map>

namespace heapd::daemon {

fair_listing list_fairly(std::vector<owned_item> items, std::size_t max_bytes) {
    std::vector<std::size_t> bytes(items.size());
    std::map<uid_t, std::vector<std::size_t>> by_owner;  // each owner's items' indexes, in order
    std::size_t total = 2;                               // the brackets
    for (std::size_t i = 0; i < items.size(); ++i) {
        bytes[i] = items[i].item.dump().size() + 1;  // and its comma
        total += bytes[i];
        by_owner[items[i].owner].push_back(i);
    }
    std::vector<bool> taken(items.size(), total <= max_bytes);
    if (total > max_bytes) {
        std::size_t used = 2;
        bool full = false;
        for (std::size_t round = 0; !full; ++round) {
            bool any = false;
            for (const auto& [owner, mine] : by_owner) {
                if (round >= mine.size()) continue;
                any = true;
                const std::size_t i = mine[round];
                if (used + bytes[i] > max_bytes) {
                    full = true;
                    break;
                }
                used += bytes[i];
                taken[i] = true;
            }
            if (!any) break;
        }
    }
    fair_listing out;
    std::map<uid_t, std::size_t> left;
    for (std::size_t i = 0; i < items.size(); ++i)
        if (taken[i])
            out.items.push_back(std::move(items[i].item));
        else
            ++left[items[i].owner];
    for (const auto& [owner, count] : left) {
        out.left_out.push_back({{"uid", owner}, {"count", count}});
        out.left_out_count += count;
    }
    return out;
}

}  // namespace heapd::daemon
