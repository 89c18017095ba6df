#pragma once
// Small helpers shared by the text renderers (report_text.cpp, diff_text.cpp).
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>

namespace heapd::text {

// printf into a std::string.
template <class... A>
std::string fmt(const char* f, A... a) {
    char buf[512];
    int n = std::snprintf(buf, sizeof buf, f, a...);
    return std::string(buf, n < 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1));
}

// Rows of a table: all when top is 0, else at most top.
inline unsigned rows(std::size_t available, unsigned top) {
    return static_cast<unsigned>(top == 0 ? available : std::min<std::size_t>(available, top));
}

} // namespace heapd::text
