#pragma once
// A stable sort of records by a 64-bit key in linear time: least significant byte first, skipping
// the bytes every key shares (object ids share their upper bytes). Millions of records sort
// several times faster than by comparison, with one buffer as big as the input beside it.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace heapd {
inline namespace analysis {

// Sorts v by key(element) ascending; equal keys keep their order. Does nothing when v is already
// sorted (records found in a dump's order often are).
template <class T, class Alloc, class Key>
void radix_sort(std::vector<T, Alloc>& v, Key key) {
    if (std::is_sorted(v.begin(), v.end(), [&](const T& a, const T& b) { return key(a) < key(b); })) return;
    std::array<std::array<std::size_t, 256>, 8> counts{};
    for (const T& x : v) {
        const std::uint64_t k = key(x);
        for (unsigned d = 0; d < 8; ++d) ++counts[d][(k >> (8 * d)) & 0xFF];
    }
    std::vector<T, Alloc> out(v.size());
    for (unsigned d = 0; d < 8; ++d) {
        auto& c = counts[d];
        if (std::find(c.begin(), c.end(), v.size()) != c.end()) continue;  // one bucket holds all
        std::size_t at = 0;
        for (std::size_t& n : c) at += std::exchange(n, at);
        for (const T& x : v) out[c[(key(x) >> (8 * d)) & 0xFF]++] = x;
        v.swap(out);
    }
}

}  // namespace analysis
}  // namespace heapd
