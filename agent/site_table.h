#pragma once
// The agent thread's tables: allocation sites (class + stack) with the estimated bytes and objects
// they allocated, the names of their classes and methods, and the sampled objects still being
// watched, by weak reference, to tell which are alive. Bounded: past each cap a sample is dropped
// and counted, never grown into.
#include <jvmti.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/method_table.h"
#include "agent/sample_ring.h"

namespace heapd::agent {

// Caps, and the memory each entry takes (beyond the strings of names; methods: method_table.h).
inline constexpr std::uint32_t max_classes = 1u << 16;       // ~80 B + name
inline constexpr std::uint32_t max_sites = 1u << 16;         // ~100 B + 8 B per frame
inline constexpr std::uint32_t max_live_samples = 1u << 17;  // 24 B

// An allocation site: the class allocated, the stack, and what was allocated there.
struct site {
    std::uint32_t klass;  // index into classes
    std::vector<site_frame> frames;
    std::uint64_t samples = 0;
    double objects = 0, bytes = 0;  // estimated from the samples (see estimate())
};

// What one sample of `size` bytes stands for, sampled on average every `interval` bytes: HotSpot
// draws the distance to the next sample from an exponential distribution (a Poisson process over
// allocated bytes), so an object of size s is sampled with probability p = 1 - exp(-s / interval),
// and stands for 1/p objects and s/p bytes (the scaling of Go's heap profiler).
struct estimate {
    double objects, bytes;
};
estimate estimate_of(jlong size, std::int64_t interval);

// Sampled objects still watched: a weak reference, the site, the size.
struct live_sample {
    jweak object;
    std::uint32_t site;
    jlong size;
};

// Counts of samples left out, by cause.
struct drop_counts {
    std::uint64_t sites = 0;    // the site table was full
    std::uint64_t live = 0;     // counted as allocated but not watched: the live table was full
    std::uint64_t classes = 0;  // the class or method table was full, or a name could not be read
};

// All the tables; the agent thread only.
class site_table {
public:
    explicit site_table(std::int64_t interval) : interval_(interval) {}
    site_table(const site_table&) = delete;
    site_table& operator=(const site_table&) = delete;

    // Takes one sample from the ring: resolves its class and frames, counts it at its site and
    // watches its object. The slot's weak references are the table's or deleted after this.
    void add(jvmtiEnv* jvmti, JNIEnv* jni, sample_slot& s);
    // Stops watching the objects that were collected.
    void sweep(JNIEnv* jni);
    // Deletes every weak reference held; the table is empty after.
    void clear(JNIEnv* jni);

    std::int64_t interval() const { return interval_; }
    const std::vector<std::string>& classes() const { return class_names_; }
    const std::vector<method_info>& methods() const { return methods_.methods(); }
    const std::vector<site>& sites() const { return sites_; }
    const std::vector<live_sample>& live() const { return live_; }
    const drop_counts& dropped() const { return dropped_; }
    std::uint64_t samples() const { return samples_; }
    // The memory the tables take, about (the figures by the caps above).
    std::uint64_t memory_bytes() const;

private:
    // Index of the class (signature), or none when the table is full or the name unreadable.
    std::uint32_t class_index(jvmtiEnv* jvmti, JNIEnv* jni, jweak klass);

    std::int64_t interval_;
    std::uint64_t samples_ = 0;
    std::vector<std::string> class_names_;
    std::unordered_map<std::string, std::uint32_t> class_ids_;
    method_table methods_;
    std::vector<site> sites_;
    std::unordered_map<std::string, std::uint32_t> site_ids_;  // key: class and frames as bytes
    std::vector<live_sample> live_;
    drop_counts dropped_;
};

}  // namespace heapd::agent
