#pragma once
// CPU samples like hprof's cpu=samples: at each tick the stacks of all Java threads that run Java
// code (runnable, not in native code or a native method) (JVMTI GetAllStackTraces, which stops the JVM at a safepoint:
// the stacks are where threads reach safepoints, so the samples are safepoint-biased, as hprof's were), each stack
// counted. Bounded: past max_traces a sample is counted as dropped. The agent thread only.
#include <jvmti.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/method_table.h"

namespace heapd::agent {

inline constexpr std::uint32_t max_traces = 1u << 16;  // ~100 B + 8 B per frame

// One stack and how often it was seen.
struct cpu_trace {
    std::vector<site_frame> frames;  // the running frame first
    std::uint64_t count = 0;
};

// The samples of one CPU sampling.
class cpu_table {
public:
    explicit cpu_table(int depth) : depth_(depth) {}
    // One tick: every runnable thread's stack but the calling thread's (the agent's own).
    void sample(jvmtiEnv* jvmti, JNIEnv* jni);

    const std::vector<method_info>& methods() const { return methods_.methods(); }
    const std::vector<cpu_trace>& traces() const { return traces_; }
    std::uint64_t ticks() const { return ticks_; }
    std::uint64_t samples() const { return samples_; }
    std::uint64_t dropped() const { return dropped_; }
    int depth() const { return depth_; }
    std::uint64_t memory_bytes() const;

private:
    int depth_;
    std::uint64_t ticks_ = 0, samples_ = 0, dropped_ = 0;
    method_table methods_;
    std::vector<cpu_trace> traces_;
    std::unordered_map<std::string, std::uint32_t> ids_;  // key: the frames as bytes
};

}  // namespace heapd::agent
