#include "base/hex_text.h"

#include <cinttypes>
#include <cstdio>

namespace heapd {

std::string hex_id(std::uint64_t v, int width) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "0x%0*" PRIx64, width < 0 ? 0 : width > 32 ? 32 : width, v);
    return buf;
}

}  // namespace heapd
