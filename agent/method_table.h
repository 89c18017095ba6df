#pragma once
// Methods of sampled stacks named once each, by jmethodID: class signature, name, descriptor,
// source file and line table; frames become (method index, line). Bounded: past max_methods a
// method is not named (the caller drops the sample and counts it). The agent thread only.
#include <jvmti.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace heapd::agent {

inline constexpr std::uint32_t max_methods = 1u << 16;  // ~150 B + names + 16 B per line entry
inline constexpr std::uint32_t no_method = ~std::uint32_t{0};

// A string JVMTI allocated (s, may be null), copied and given back to JVMTI.
std::string take_string(jvmtiEnv* jvmti, char* s);

// A resolved method: its class's signature, name and descriptor, source file, and line table.
struct method_info {
    std::string klass, name, descriptor, file;
    std::vector<std::pair<jlocation, jint>> lines;  // start location, line; sorted by location
};

// One frame of a stack: a method (index into the table) and its line (-1 unknown, -2 native).
struct site_frame {
    std::uint32_t method;
    std::int32_t line;
};

// The named methods.
class method_table {
public:
    // The frame of a JVMTI frame, or a method of no_method when it cannot be named or the table is full.
    site_frame frame(jvmtiEnv* jvmti, const jvmtiFrameInfo& f);
    const std::vector<method_info>& methods() const { return methods_; }
    std::uint64_t memory_bytes() const;
    void clear();

private:
    std::uint32_t index(jvmtiEnv* jvmti, jmethodID method);
    std::vector<method_info> methods_;
    std::unordered_map<jmethodID, std::uint32_t> ids_;
};

}  // namespace heapd::agent
