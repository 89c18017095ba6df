#pragma once
// Big-endian integer decoding from raw bytes; callers check bounds before calling.
#include <bit>
#include <cstdint>
#include <cstring>

namespace heapd {
inline namespace hprof {
namespace be {

template <class T>
inline T load(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (std::endian::native == std::endian::little) v = std::byteswap(v);
    return v;
}

inline std::uint8_t u1(const std::byte* p) { return static_cast<std::uint8_t>(*p); }
inline std::uint16_t u2(const std::byte* p) { return load<std::uint16_t>(p); }
inline std::uint32_t u4(const std::byte* p) { return load<std::uint32_t>(p); }
inline std::uint64_t u8(const std::byte* p) { return load<std::uint64_t>(p); }

// An object identifier of 4 or 8 bytes, widened to 64 bits.
inline std::uint64_t id(const std::byte* p, unsigned id_size) { return id_size == 8 ? u8(p) : u4(p); }

}  // namespace be
}  // namespace hprof
}  // namespace heapd
