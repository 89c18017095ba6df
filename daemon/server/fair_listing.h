#pragma once
// A listing of many owners' items (JVMs, death records) kept within one reply: when the items
// would take more than a reply may carry, each owner's are taken in turn, one at a time, so that one
// user's thousands of processes cannot crowd out, or break, the listing of everyone else's.
#include <sys/types.h>

#include <cstddef>
#include <vector>

#include "formats/wire/protocol.h"

namespace heapd::daemon {

// The most bytes of items a listing reply carries (a message is at most 16 MiB): a host's JVMs take
// a few KiB each.
inline constexpr std::size_t max_listing_bytes = std::size_t{8} << 20;

// One item of a listing and whose it is.
struct owned_item {
    uid_t owner = 0;
    wire::json item;
};

// What a listing keeps: the items, in the order given, and how many of each owner's were left out.
struct fair_listing {
    wire::json items = wire::json::array();
    wire::json left_out = wire::json::array();  // [{"uid": U, "count": N}], by uid
    std::size_t left_out_count = 0;
};

// All the items when their JSON fits in max_bytes; else the owners in turn (each owner's items in
// the order given), one item each, until the next would not fit, the rest counted per owner.
fair_listing list_fairly(std::vector<owned_item> items, std::size_t max_bytes = max_listing_bytes);

}  // namespace heapd::daemon
