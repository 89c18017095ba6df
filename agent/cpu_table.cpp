#include "agent/cpu_table.h"

namespace heapd::agent {

void cpu_table::sample(jvmtiEnv* jvmti, JNIEnv* jni) {
    // The threads GetAllStackTraces names are local references of the calling thread, which never
    // returns to Java: a frame of its own frees them at the end.
    if (jni->PushLocalFrame(64) != JNI_OK) return;
    jvmtiStackInfo* stacks = nullptr;
    jint count = 0;
    if (jvmti->GetAllStackTraces(depth_, &stacks, &count) != JVMTI_ERROR_NONE) {
        jni->PopLocalFrame(nullptr);
        return;
    }
    ++ticks_;
    jthread self = nullptr;
    jvmti->GetCurrentThread(&self);
    for (jint t = 0; t < count; ++t) {
        const jvmtiStackInfo& s = stacks[t];
        // Running Java code: runnable, not in native code, and not in a native method (a thread
        // blocked in a native call, on a socket or in a wait of the JVM's own, looks runnable).
        if ((s.state & JVMTI_THREAD_STATE_RUNNABLE) == 0 || (s.state & JVMTI_THREAD_STATE_IN_NATIVE) != 0 ||
            s.frame_count == 0 || s.frame_buffer[0].location < 0)
            continue;
        if (self != nullptr && jni->IsSameObject(s.thread, self)) continue;
        ++samples_;
        std::string key;
        std::vector<site_frame> frames;
        bool named = true;
        for (jint i = 0; i < s.frame_count && named; ++i) {
            site_frame f = methods_.frame(jvmti, s.frame_buffer[i]);
            named = f.method != no_method;
            frames.push_back(f);
            key.append(reinterpret_cast<const char*>(&f), sizeof f);
        }
        if (!named) {
            ++dropped_;
            continue;
        }
        if (auto it = ids_.find(key); it != ids_.end()) {
            ++traces_[it->second].count;
        } else if (traces_.size() < max_traces) {
            ids_.emplace(std::move(key), static_cast<std::uint32_t>(traces_.size()));
            traces_.push_back({std::move(frames), 1});
        } else {
            ++dropped_;
        }
    }
    jvmti->Deallocate(reinterpret_cast<unsigned char*>(stacks));
    jni->PopLocalFrame(nullptr);
}

std::uint64_t cpu_table::memory_bytes() const {
    std::uint64_t bytes = methods_.memory_bytes() + traces_.size() * 100;
    for (const cpu_trace& t : traces_) bytes += t.frames.size() * sizeof(site_frame);
    return bytes;
}

}  // namespace heapd::agent
