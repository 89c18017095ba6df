#include "base/keyed_hash.h"

namespace heapd {
namespace {

std::uint64_t rotl(std::uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

std::uint64_t little_endian(const std::uint8_t* p, std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t{p[i]} << (8 * i);
    return v;
}

struct sip_state {
    std::uint64_t v0, v1, v2, v3;
    void rounds(int n) {
        for (int i = 0; i < n; ++i) {
            v0 += v1;
            v1 = rotl(v1, 13);
            v1 ^= v0;
            v0 = rotl(v0, 32);
            v2 += v3;
            v3 = rotl(v3, 16);
            v3 ^= v2;
            v0 += v3;
            v3 = rotl(v3, 21);
            v3 ^= v0;
            v2 += v1;
            v1 = rotl(v1, 17);
            v1 ^= v2;
            v2 = rotl(v2, 32);
        }
    }
    void absorb(std::uint64_t m) {
        v3 ^= m;
        rounds(2);
        v0 ^= m;
    }
};

}  // namespace

std::uint64_t keyed_hash(const hash_key& key, std::string_view data) {
    const std::uint64_t k0 = little_endian(key.data(), 8), k1 = little_endian(key.data() + 8, 8);
    sip_state s{k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
                k1 ^ 0x7465646279746573ULL};
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(data.data());
    const std::size_t whole = data.size() / 8 * 8;
    for (std::size_t i = 0; i < whole; i += 8) s.absorb(little_endian(bytes + i, 8));
    s.absorb(little_endian(bytes + whole, data.size() - whole) | (std::uint64_t{data.size() & 0xff} << 56));
    s.v2 ^= 0xff;
    s.rounds(4);
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

}  // namespace heapd
