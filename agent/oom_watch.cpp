#include "agent/oom_watch.h"

#include <unistd.h>

#include <chrono>
#include <string_view>

#include "agent/daemon_request.h"

namespace heapd::agent {
namespace {

// "java.nio.Bits" for the signature "Ljava/nio/Bits;".
std::string class_name(std::string_view signature) {
    if (signature.size() >= 2 && signature.front() == 'L' && signature.back() == ';')
        signature = signature.substr(1, signature.size() - 2);
    std::string name(signature);
    for (char& c : name)
        if (c == '/') c = '.';
    return name;
}

bool in_jdk(std::string_view name) {
    for (std::string_view prefix : {"java.", "javax.", "jdk.", "sun.", "com.sun."})
        if (name.starts_with(prefix)) return true;
    return false;
}

std::int64_t now_s() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

const char* oom_kind_name(oom_kind k) {
    switch (k) {
    case oom_kind::direct_buffer: return "direct-buffer";
    case oom_kind::native_thread: return "native-thread";
    case oom_kind::thrown: return "thrown";
    }
    return "thrown";
}

oom_kind oom_kind_of(const std::string& maker_class) {
    // java.nio.Bits.reserveMemory on every JDK since 6; Thread.start0 when HotSpot cannot make the
    // native thread (it constructs the error itself, through the same constructor).
    if (maker_class == "java.nio.Bits") return oom_kind::direct_buffer;
    if (maker_class == "java.lang.Thread") return oom_kind::native_thread;
    return oom_kind::thrown;
}

oom_watch& oom_watch::instance() {
    static oom_watch w;
    return w;
}

jint oom_watch::on_load(JavaVM* vm, const agent_options& options, const std::string& error) {
    if (!error.empty() || jvmti_ != nullptr) return error.empty() ? JNI_OK : JNI_ERR;
    jvmtiEnv* env = nullptr;
    if (vm->GetEnv(reinterpret_cast<void**>(&env), JVMTI_VERSION_1_2) != JNI_OK || env == nullptr) return JNI_ERR;
    jvmtiCapabilities caps{};
    caps.can_generate_breakpoint_events = 1;
    if (env->AddCapabilities(&caps) != JVMTI_ERROR_NONE) {
        env->DisposeEnvironment();
        return JNI_ERR;
    }
    jvmtiEventCallbacks callbacks{};
    callbacks.VMInit = &on_vm_init;
    callbacks.Breakpoint = &on_breakpoint;
    env->SetEventCallbacks(&callbacks, sizeof callbacks);
    env->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, nullptr);
    env->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_BREAKPOINT, nullptr);
    socket_ = options.socket;
    wait_s_ = options.wait_s;
    jvmti_ = env;
    return JNI_OK;
}

// Breakpoints can be set once classes are loaded: at VMInit, OutOfMemoryError is.
void JNICALL oom_watch::on_vm_init(jvmtiEnv* jvmti, JNIEnv* jni, jthread) {
    oom_watch& w = instance();
    jclass error = jni->FindClass("java/lang/OutOfMemoryError");
    jmethodID constructor = error ? jni->GetMethodID(error, "<init>", "(Ljava/lang/String;)V") : nullptr;
    if (constructor == nullptr) {
        if (jni->ExceptionCheck()) jni->ExceptionClear();
        return;
    }
    if (jvmti->SetBreakpoint(constructor, 0) == JVMTI_ERROR_NONE) w.constructor_ = constructor;
}

std::string oom_watch::where(jthread thread, std::string& maker_class) const {
    // Frame 0 is the constructor, frame 1 the method that made the error.
    jvmtiFrameInfo frames[16];
    jint count = 0;
    if (jvmti_->GetStackTrace(thread, 0, 16, frames, &count) != JVMTI_ERROR_NONE) return "";
    std::string maker, caller;
    for (jint i = 1; i < count && caller.empty(); ++i) {
        jclass declaring = nullptr;
        char* signature = nullptr;
        char* method = nullptr;
        if (jvmti_->GetMethodDeclaringClass(frames[i].method, &declaring) != JVMTI_ERROR_NONE ||
            jvmti_->GetClassSignature(declaring, &signature, nullptr) != JVMTI_ERROR_NONE ||
            jvmti_->GetMethodName(frames[i].method, &method, nullptr, nullptr) != JVMTI_ERROR_NONE) {
            jvmti_->Deallocate(reinterpret_cast<unsigned char*>(signature));
            break;
        }
        const std::string name = class_name(signature);
        const std::string text = name + "." + method;
        jvmti_->Deallocate(reinterpret_cast<unsigned char*>(signature));
        jvmti_->Deallocate(reinterpret_cast<unsigned char*>(method));
        if (i == 1) {
            maker_class = name;
            maker = text;
        } else if (!in_jdk(name)) {
            caller = text;
        }
    }
    return caller.empty() ? maker : maker + ", called by " + caller;
}

// The thread making an OutOfMemoryError waits here, in native code (safe for the safepoint of the
// dump), while heapd dumps the heap; then the error is made and thrown as it would have been.
void JNICALL oom_watch::on_breakpoint(jvmtiEnv*, JNIEnv*, jthread thread, jmethodID method, jlocation) {
    oom_watch& w = instance();
    if (method != w.constructor_) return;
    std::string maker_class;
    const std::string made_in = w.where(thread, maker_class);
    const oom_kind kind = oom_kind_of(maker_class);
    // One dump per kind per oom_repeat_s: the first thread takes it, the others go on.
    std::atomic<std::int64_t>& last = w.last_[static_cast<int>(kind)];
    std::int64_t before = last.load();
    const std::int64_t now = now_s();
    if ((before != 0 && now - before < oom_repeat_s) || !last.compare_exchange_strong(before, now)) return;
    const std::string frame =
        dump_request_frame(::getpid(), own_start_time(), oom_kind_name(kind),
                           "java.lang.OutOfMemoryError made in " + (made_in.empty() ? "?" : made_in));
    // Nobody to tell when heapd cannot be asked: the JVM's output is the application's, and the
    // daemon's log has every request it took.
    (void)ask_for_dump(w.socket_, frame, w.wait_s_);
}

}  // namespace heapd::agent
