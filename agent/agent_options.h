#pragma once
// The options string heapd passes to the agent with each attach `load` (or a JVM's -agentpath:):
// a command and its settings, e.g. "start,interval=524288,depth=16,protocol=1".
#include <cstdint>
#include <string>

namespace heapd::agent {

// The version of the options and of the answer file; heapd and a loaded agent must agree.
inline constexpr int protocol_version = 1;

// Bounds of the settings, and their defaults (HotSpot's own sampling interval, hprof's depth).
inline constexpr std::int64_t default_interval = 512 * 1024;
inline constexpr std::int64_t max_interval = (std::int64_t{1} << 31) - 1;  // SetHeapSamplingInterval takes a jint
inline constexpr int default_depth = 16;
inline constexpr int max_depth = 64;

// What the agent is asked to do: allocation sampling (start, show, stop), CPU sampling (cpu_start,
// cpu_show, cpu_stop), its state, or (only with -agentpath: at the JVM's start) the OOM watch
// (agent/oom_watch.h).
enum class command { start, show, stop, status, cpu_start, cpu_show, cpu_stop, oom };

// The OOM watch's defaults: heapd's socket (the daemon's own default), and how long the thread
// making an OutOfMemoryError waits at most for its heap to be dumped (as heapd's hook holds a JVM).
inline constexpr const char* default_socket = "/run/heapd/heapd.sock";
inline constexpr int default_wait_s = 120;
inline constexpr int max_wait_s = 600;

// CPU samples: milliseconds between ticks, and its bounds.
inline constexpr int default_period_ms = 10;
inline constexpr int max_period_ms = 1000;

// One parsed options string.
struct agent_options {
    command what = command::status;
    std::int64_t interval = default_interval;  // bytes between samples, on average, per thread (0: every allocation)
    int depth = default_depth;                 // frames kept per sample
    bool gc = false;                           // show, stop: a full collection first, so that live means reachable
    int period_ms = default_period_ms;         // cpu_start: between ticks
    std::string file;                          // where the answer goes: /tmp/heapd-agent-*.json, or none
    int protocol = protocol_version;           // what heapd speaks (start with -agentpath: needs none)
    std::string socket = default_socket;       // oom: heapd's socket, an absolute path
    int wait_s = default_wait_s;               // oom: seconds a thread waits for its dump
};

// This process's start time: clock ticks after boot (/proc/self/stat field 22); 0 when unreadable.
std::uint64_t own_start_time();

// Where a sampling agent writes its table when the JVM first runs out of Java heap (JVMTI's
// ResourceExhausted, after the JVM's own OnOutOfMemoryError hook has run): /tmp/heapd-agent-oom-
// PID-START-RANDOM.json, with the JVM's pid as it knows it, its start time (clock ticks since boot,
// /proc/self/stat field 22) and 16 random hex digits, so that heapd finds it for the OOM dump even
// after the JVM exited (attach/agent_control.h's take_oom_answer), and nobody can take the name
// first: a file another user put at a predictable name would keep the agent from writing its own.
std::string oom_answer_path();

// Parses "COMMAND[,key=value...]" (keys: interval, depth, gc, period, file, protocol, socket, wait). False with why in
// error for anything else: an unknown command or key, a number out of bounds, a file outside
// /tmp/heapd-agent-*.json or with a '/' in its name. An unknown command still reads the keys after it
// (so that the error can be answered in the file named there).
bool parse_agent_options(const char* text, agent_options& out, std::string& error);

// The name of a command, as in the options string.
const char* command_name(command c);

}  // namespace heapd::agent
