#pragma once
// How many of one user's JVM deaths are recorded, logged and journalled: a steady rate with a
// burst, per owner. A user whose processes die by the thousand (fake JVMs exiting in a loop) fills
// neither the log nor the journal nor the bucket with them, and no other user's deaths are held back.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace heapd::daemon {

// The deaths of an owner let through, and those held back since last asked; not thread-safe (the
// death watcher's thread only).
class death_rate {
public:
    // burst deaths at once, then one each refill_ms.
    explicit death_rate(std::size_t burst = 30, std::int64_t refill_ms = 2000) : burst_(burst), refill_ms_(refill_ms) {}

    // Whether a death of owner's at now_ms is to be recorded; counts it as held back if not.
    bool admit(uid_t owner, std::int64_t now_ms);

    // One owner's deaths held back since the last call.
    struct held_back {
        uid_t owner = 0;
        std::size_t count = 0;
    };
    // The deaths held back, per owner, at most once each interval_ms (empty before then).
    std::vector<held_back> take_held_back(std::int64_t now_ms, std::int64_t interval_ms = 10'000);

private:
    struct bucket {
        double tokens = 0;
        std::int64_t at_ms = 0;
        std::size_t held = 0;
    };
    const std::size_t burst_;
    const std::int64_t refill_ms_;
    std::map<uid_t, bucket> buckets_;
    std::int64_t last_report_ms_ = 0;
};

}  // namespace heapd::daemon
