#pragma once
// The agent's OOM watch (-agentpath:LIB=oom): the OutOfMemoryErrors that Java code and the JVM's
// own thread start throw (`Direct buffer memory`, `unable to create native thread`), which neither
// -XX:OnOutOfMemoryError nor -XX:+HeapDumpOnOutOfMemoryError sees. A breakpoint on the error's
// constructor OutOfMemoryError(String) stops the thread that makes one; heapd is asked for a heap
// dump of the JVM (agent/daemon_request.h) and the thread waits for it before the error is thrown.
// The Java heap's and metaspace's errors are HotSpot's preallocated instances, never constructed:
// the hook takes those. Breakpoints are a capability of the JVM's start only (never of an attach).
#include <jni.h>
#include <jvmti.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "agent/agent_options.h"

namespace heapd::agent {

// The kinds of OutOfMemoryError the watch names, by the method that made the error.
enum class oom_kind { direct_buffer, native_thread, thrown };

// "direct-buffer", "native-thread", "thrown": the dump request's oom_kind.
const char* oom_kind_name(oom_kind k);

// The kind of an error made in the method of this class ("java.nio.Bits", "java.lang.Thread").
oom_kind oom_kind_of(const std::string& maker_class);

// One error of each kind is dumped per this many seconds at most: a program that catches its
// errors and tries again gets one dump for the episode, not one per attempt.
inline constexpr std::int64_t oom_repeat_s = 600;

// The watch; all of it reached through instance().
class oom_watch {
public:
    static oom_watch& instance();
    // Agent_OnLoad with the oom command: its own JVMTI environment, the breakpoint capability and
    // event. JNI_ERR (the JVM then refuses to start, as for any agent that fails) on bad options or
    // a JVM that has no breakpoints.
    jint on_load(JavaVM* vm, const agent_options& options, const std::string& error);

private:
    oom_watch() = default;
    static void JNICALL on_vm_init(jvmtiEnv* jvmti, JNIEnv* jni, jthread thread);
    static void JNICALL on_breakpoint(jvmtiEnv* jvmti, JNIEnv* jni, jthread thread, jmethodID method,
                                      jlocation location);
    // "java.nio.Bits.reserveMemory, called by OffHeap.touched": the maker of the error and the first
    // frame outside the JDK (java., javax., jdk., sun.) below it; maker_class gets the maker's class.
    std::string where(jthread thread, std::string& maker_class) const;

    jvmtiEnv* jvmti_ = nullptr;
    jmethodID constructor_ = nullptr;  // OutOfMemoryError(String)
    std::string socket_;
    int wait_s_ = 0;
    // When each kind was last dumped (steady seconds; 0: never).
    std::atomic<std::int64_t> last_[3] = {};
};

}  // namespace heapd::agent
