#pragma once
// Numbers as hex for people and for messages: object ids, addresses, magic numbers.
#include <cstdint>
#include <string>

namespace heapd {

// "0x" followed by the lowercase hex digits of v, zero-padded to at least width digits:
// hex_id(0x7f3abc00) is "0x7f3abc00", hex_id(0x12a, 6) is "0x00012a".
std::string hex_id(std::uint64_t v, int width = 0);

}  // namespace heapd
