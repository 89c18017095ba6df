#include "agent/sample_ring.h"

namespace heapd::agent {

sample_ring::sample_ring(std::uint32_t slots, int depth)
    : count_(slots),
      depth_(depth),
      slots_(new sample_slot[slots]),
      frames_(new jvmtiFrameInfo[static_cast<std::size_t>(slots) * static_cast<std::size_t>(depth)]) {
    for (std::uint32_t i = 0; i < slots; ++i) slots_[i].frames = &frames_[static_cast<std::size_t>(i) * depth];
}

sample_slot* sample_ring::claim() {
    for (int t = 0; t < tries; ++t) {
        sample_slot& s = slots_[next_.fetch_add(1, std::memory_order_relaxed) % count_];
        std::uint32_t expected = free;
        if (s.state.compare_exchange_strong(expected, writing, std::memory_order_acquire, std::memory_order_relaxed))
            return &s;
    }
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
}

std::uint64_t sample_ring::bytes() const {
    return count_ * (sizeof(sample_slot) + static_cast<std::uint64_t>(depth_) * sizeof(jvmtiFrameInfo));
}

}  // namespace heapd::agent
