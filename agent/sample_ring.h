#pragma once
// The hand-over of allocation samples from application threads to the agent thread: a fixed set of
// slots that an event callback claims and fills without ever blocking (a slot is taken with one
// compare-and-swap; when a few tries find none free the sample is dropped and counted), and that the
// agent thread empties.
#include <jvmti.h>

#include <atomic>
#include <cstdint>
#include <memory>

namespace heapd::agent {

// One sample as the callback leaves it: weak references to the object and its class (the agent
// thread turns the class into a name and keeps the object's to see whether it lives), its size, and
// the stack, deepest frame first.
struct sample_slot {
    std::atomic<std::uint32_t> state{0};  // free, writing, filled
    jint frame_count = 0;
    jlong size = 0;
    jweak object = nullptr;
    jweak klass = nullptr;
    jvmtiFrameInfo* frames = nullptr;  // depth entries, in the ring's frame block
};

// The slots, and their frames in one block. Memory: slots × (48 + 16 × depth) bytes, allocated once.
class sample_ring {
public:
    sample_ring(std::uint32_t slots, int depth);
    sample_ring(const sample_ring&) = delete;
    sample_ring& operator=(const sample_ring&) = delete;

    int depth() const { return depth_; }
    // A free slot, now the caller's to fill and publish; nullptr (and one more dropped) when a few
    // tries find none. Any thread, never blocks.
    sample_slot* claim();
    // Hands a filled slot to the agent thread.
    static void publish(sample_slot* s) { s->state.store(filled, std::memory_order_release); }
    // Gives a claimed slot back unfilled (the sample could not be taken).
    static void release(sample_slot* s) { s->state.store(free, std::memory_order_release); }
    // Calls take(slot) for each filled slot and frees it: the agent thread only.
    template <typename Take>
    void drain(Take&& take) {
        for (std::uint32_t i = 0; i < count_; ++i) {
            sample_slot& s = slots_[i];
            if (s.state.load(std::memory_order_acquire) != filled) continue;
            take(s);
            s.state.store(free, std::memory_order_release);
        }
    }
    std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
    // Bytes this ring allocated.
    std::uint64_t bytes() const;

private:
    static constexpr std::uint32_t free = 0, writing = 1, filled = 2;
    static constexpr int tries = 8;
    std::uint32_t count_;
    int depth_;
    std::unique_ptr<sample_slot[]> slots_;
    std::unique_ptr<jvmtiFrameInfo[]> frames_;
    std::atomic<std::uint32_t> next_{0};
    std::atomic<std::uint64_t> dropped_{0};
};

}  // namespace heapd::agent
