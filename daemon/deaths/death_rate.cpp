#include "daemon/deaths/death_rate.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace heapd::daemon {

bool death_rate::admit(uid_t owner, std::int64_t now_ms) {
    auto [it, fresh] = buckets_.try_emplace(owner);
    bucket& b = it->second;
    if (fresh) {
        b.tokens = static_cast<double>(burst_);
        b.at_ms = now_ms;
    }
    if (now_ms > b.at_ms) {
        b.tokens = std::min(static_cast<double>(burst_),
                            b.tokens + static_cast<double>(now_ms - b.at_ms) / static_cast<double>(refill_ms_));
        b.at_ms = now_ms;
    }
    if (b.tokens >= 1) {
        b.tokens -= 1;
        return true;
    }
    ++b.held;
    return false;
}

std::vector<death_rate::held_back> death_rate::take_held_back(std::int64_t now_ms, std::int64_t interval_ms) {
    std::vector<held_back> out;
    if (now_ms - last_report_ms_ < interval_ms) return out;
    last_report_ms_ = now_ms;
    for (auto it = buckets_.begin(); it != buckets_.end();) {
        if (it->second.held > 0) out.push_back({it->first, std::exchange(it->second.held, 0)});
        // A full bucket with nothing held is the same as none: forgotten, so that owners do not pile up.
        const bool full =
            it->second.tokens + static_cast<double>(now_ms - it->second.at_ms) / static_cast<double>(refill_ms_) >=
            static_cast<double>(burst_);
        it = full && it->second.held == 0 ? buckets_.erase(it) : std::next(it);
    }
    return out;
}

}  // namespace heapd::daemon
