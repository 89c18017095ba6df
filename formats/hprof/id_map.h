#pragma once
// An open-addressing hash map from 64-bit identifiers to small values, for hot lookups by id.
#include <cstdint>

#include "base/big_memory.h"

namespace heapd {
inline namespace hprof {

// Maps any uint64 key to V; linear probing, power-of-two capacity, no erase. The one key that
// marks empty slots (~0, which hostile input can use as an id) is kept beside the table. A big
// table (a map per String or per object) is a big array, spilled to disk when memory is short.
template <class V>
class id_map {
public:
    static constexpr std::uint64_t empty_key = ~std::uint64_t{0};

    // The value for key, or nullptr.
    const V* find(std::uint64_t key) const {
        if (key == empty_key) return has_empty_key_ ? &empty_key_value_ : nullptr;
        if (size_ == 0) return nullptr;
        for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
            if (keys_[i] == key) return &values_[i];
            if (keys_[i] == empty_key) return nullptr;
        }
    }
    V* find(std::uint64_t key) { return const_cast<V*>(static_cast<const id_map*>(this)->find(key)); }

    // Inserts key with value if absent; returns the stored value and whether it was inserted.
    std::pair<V*, bool> insert(std::uint64_t key, const V& value) {
        if (key == empty_key) {
            if (has_empty_key_) return {&empty_key_value_, false};
            has_empty_key_ = true;
            empty_key_value_ = value;
            return {&empty_key_value_, true};
        }
        if ((size_ + 1) * 4 > keys_.size() * 3) grow();
        for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
            if (keys_[i] == key) return {&values_[i], false};
            if (keys_[i] == empty_key) {
                keys_[i] = key;
                values_[i] = value;
                ++size_;
                return {&values_[i], true};
            }
        }
    }

    std::size_t size() const { return size_ + (has_empty_key_ ? 1 : 0); }

    // Calls f(key, value) for every entry, in no particular order.
    template <class F>
    void for_each(F&& f) const {
        for (std::size_t i = 0; i < keys_.size(); ++i)
            if (keys_[i] != empty_key) f(keys_[i], values_[i]);
        if (has_empty_key_) f(empty_key, empty_key_value_);
    }

private:
    std::size_t slot(std::uint64_t key) const {
        return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
    }
    void grow() {
        std::size_t cap = keys_.empty() ? 64 : keys_.size() * 2;
        big_vector<std::uint64_t> old_keys(cap, empty_key);
        big_vector<V> old_values(cap);
        old_keys.swap(keys_);
        old_values.swap(values_);
        mask_ = cap - 1;
        shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(cap));
        size_ = 0;
        for (std::size_t i = 0; i < old_keys.size(); ++i)
            if (old_keys[i] != empty_key) insert(old_keys[i], old_values[i]);
    }

    big_vector<std::uint64_t> keys_;
    big_vector<V> values_;
    std::size_t size_ = 0;  // keys in the table, the empty key aside
    bool has_empty_key_ = false;
    V empty_key_value_{};
    std::size_t mask_ = 0;
    unsigned shift_ = 64;
};

}  // namespace hprof
}  // namespace heapd
