#pragma once
// What heapd's allocation-sampling agent (agent/) answered: the state of sampling and its sites,
// each a class and a stack with the bytes and objects estimated to have been allocated there and to
// be alive still. Read from the agent's JSON answer, which comes from inside the JVM and is
// therefore untrusted: sizes bounded, every index checked, names kept as given (show them through
// line_safe or an escaper), each cut to max_name_bytes.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace heapd::sites {

// The agent protocol this heapd speaks (agent/agent_options.h's protocol_version).
inline constexpr int agent_protocol = 1;
// Bounds of an answer: its bytes, and the entries of each table (the agent's own caps).
inline constexpr std::size_t max_answer_bytes = 64u << 20;
inline constexpr std::size_t max_entries = 1u << 16;
inline constexpr std::size_t max_frames = 64;
// Bytes kept of any one name (class, method, descriptor, source file): a longer one is cut there
// and says how long it was. No JVM names a class so; an answer that does is not to be expanded.
inline constexpr std::size_t max_name_bytes = 1024;

// A method of a frame: its class (Java form, "java.util.HashMap"), name, descriptor, source file.
struct profile_method {
    std::string klass, name, descriptor, file;
};

// A frame: a method (index into methods) and a line (-1 unknown, -2 native method).
struct profile_frame {
    std::uint32_t method;
    std::int32_t line;
};

// A site: the class allocated (index into classes), the stack (allocating frame first), the
// estimates of what was allocated there and of what of it is alive, and the samples behind them.
struct profile_site {
    std::uint32_t klass = 0;
    std::vector<profile_frame> frames;
    std::uint64_t samples = 0, live_samples = 0;
    double objects = 0, bytes = 0, live_objects = 0, live_bytes = 0;
};

// A stack seen by CPU sampling, and how many times.
struct cpu_trace_entry {
    std::vector<profile_frame> frames;  // indices into allocation_profile::cpu_methods
    std::uint64_t count = 0;
};

// One answer: allocation sampling's state and tables, and CPU sampling's.
struct allocation_profile {
    int protocol = 0;
    std::string agent_version;
    std::string command;
    std::string error;  // the agent's refusal, empty when it carried out the command
    bool sampling = false;
    std::int64_t interval = 0;  // bytes between samples on average (JEP 331), per thread
    int depth = 0;
    double seconds = 0;  // sampled for
    std::uint64_t samples = 0;
    std::uint64_t dropped_ring = 0, dropped_sites = 0, dropped_live = 0, dropped_unnamed = 0;
    std::uint64_t memory_bytes = 0;    // the agent's, in the JVM
    bool has_tables = false;           // show and stop answer with tables
    std::vector<std::string> classes;  // Java form: "byte[]", "java.lang.String"
    std::vector<profile_method> methods;
    std::vector<profile_site> sites;
    // CPU sampling (cpu_start, cpu_show, cpu_stop).
    bool cpu_sampling = false;
    int cpu_period_ms = 0;
    double cpu_seconds = 0;
    bool has_cpu = false;  // cpu_show and cpu_stop answer with the samples
    int cpu_depth = 0;
    std::uint64_t cpu_ticks = 0, cpu_samples = 0, cpu_dropped = 0;
    std::vector<profile_method> cpu_methods;
    std::vector<cpu_trace_entry> cpu_traces;
};

// Reads an answer as it is parsed, building no JSON document (internal/answer_reader.h): what it
// costs is what the profile keeps. Errors (bad_value, naming what is wrong): not JSON, too big, a
// field missing or of the wrong type, an index or count out of bounds; protocol: another version.
result<allocation_profile> parse_allocation_profile(std::string_view json);

// A JVM type signature in Java form: "Ljava/lang/String;" -> "java.lang.String", "[B" -> "byte[]".
std::string java_type_name(std::string_view signature);

}  // namespace heapd::sites
