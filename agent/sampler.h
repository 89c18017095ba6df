#pragma once
// The agent inside one JVM: its JVMTI environment, allocation sampling (JEP 331) switched on and
// off, and the agent thread that owns the tables and carries out commands. One per process,
// whatever the number of times the library is loaded: each further `load` is a command to it.
#include <jni.h>
#include <jvmti.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "agent/agent_options.h"
#include "agent/answer_file.h"
#include "agent/cpu_table.h"
#include "agent/sample_ring.h"
#include "agent/site_table.h"

namespace heapd::agent {

// Slots in the ring between the application threads and the agent thread, which empties it every
// drain_ms while sampling: 4096 slots take a burst of 200,000 samples a second.
inline constexpr std::uint32_t ring_slots = 4096;
inline constexpr int drain_ms = 20;
// The longest an attach `load` waits for the agent thread to carry out its command, and the longest
// the thread that ran out of heap waits for the table to be written.
inline constexpr int command_wait_ms = 10000;
inline constexpr int oom_wait_ms = 5000;

// The agent's state; all of it reached through instance().
class sampler {
public:
    static sampler& instance();

    // Agent_OnLoad (-agentpath:LIB=OPTIONS): sampling from the first allocation when asked to start;
    // the agent thread starts with the VM. JNI_OK or JNI_ERR (nothing installed then).
    jint on_load(JavaVM* vm, const agent_options& options, const std::string& error);
    // Agent_OnAttach: carries out the command on the agent thread and writes its answer. JNI_ERR
    // only when nothing is installed and no answer could be written.
    jint on_attach(JavaVM* vm, const agent_options& options, const std::string& error);

private:
    sampler() = default;
    // The JVMTI environment, raw monitor and callbacks, once per process; false with why in error.
    bool ensure_environment(JavaVM* vm, std::string& error);
    bool ensure_thread(JNIEnv* jni, std::string& error);
    // The commands, on the agent thread.
    void run(JNIEnv* jni, const agent_options& options);
    std::string start(const agent_options& options);
    void stop_sampling(JNIEnv* jni);
    void drain(JNIEnv* jni);
    // The CPU commands, on the agent thread; the answer's text.
    std::string run_cpu(const agent_options& options);
    // Milliseconds the agent thread may wait before its next piece of work.
    long wait_ms() const;
    answer_facts facts(command what) const;
    std::uint64_t memory_bytes() const;

    static void JNICALL thread_main(jvmtiEnv* jvmti, JNIEnv* jni, void* arg);
    static void JNICALL on_sample(jvmtiEnv* jvmti, JNIEnv* jni, jthread thread, jobject object, jclass klass,
                                  jlong size);
    static void JNICALL on_vm_init(jvmtiEnv* jvmti, JNIEnv* jni, jthread thread);
    static void JNICALL on_vm_death(jvmtiEnv* jvmti, JNIEnv* jni);
    static void JNICALL on_resource_exhausted(jvmtiEnv* jvmti, JNIEnv* jni, jint flags, const void* reserved,
                                              const char* description);
    // Hands a command to the agent thread and waits for it (at most wait_ms); true when carried out.
    bool hand_over(const agent_options& options, int wait_ms);

    jvmtiEnv* jvmti_ = nullptr;
    jrawMonitorID lock_ = nullptr;  // guards the fields below it
    bool thread_started_ = false;
    bool dead_ = false;                        // the VM is going away
    const agent_options* pending_ = nullptr;   // the command waiting for the agent thread
    std::uint64_t issued_ = 0, finished_ = 0;  // commands handed over, and carried out

    // Read by the event callback on application threads.
    std::atomic<bool> sampling_{false};
    std::atomic<int> active_{0};  // callbacks inside
    std::atomic<sample_ring*> ring_{nullptr};
    std::atomic<bool> oom_answered_{false};  // the answer at the first OutOfMemoryError is written

    // The agent thread's own.
    std::unique_ptr<sample_ring> owned_ring_;
    std::unique_ptr<site_table> tables_;
    std::unique_ptr<cpu_table> cpu_;  // while CPU sampling
    int cpu_period_ms_ = 0;
    std::chrono::steady_clock::time_point cpu_started_{}, cpu_next_{};
    std::chrono::steady_clock::time_point started_{};
    std::int64_t interval_ = 0;
    int depth_ = 0;
    bool holds_capability_ = false;
};

}  // namespace heapd::agent
