#pragma once
// A keyed hash (SipHash-2-4, a pseudorandom function of short inputs): a tag that only a holder of
// the key can make for given bytes, so that a name heapd made can be told from one someone else
// made after the fact without keeping a record of every name.
#include <array>
#include <cstdint>
#include <string_view>

namespace heapd {

// A 128-bit key.
using hash_key = std::array<std::uint8_t, 16>;

// SipHash-2-4 of data under key.
std::uint64_t keyed_hash(const hash_key& key, std::string_view data);

}  // namespace heapd
