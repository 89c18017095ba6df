#include "agent/sampler.h"

#include <time.h>

#include <algorithm>

namespace heapd::agent {
namespace {

// The capabilities allocation sampling takes and gives back: the event (one environment at a time
// holds it) and the heap's exhaustion.
jvmtiCapabilities sampling_capabilities() {
    jvmtiCapabilities caps{};
    caps.can_generate_sampled_object_alloc_events = 1;
    caps.can_generate_resource_exhaustion_heap_events = 1;
    return caps;
}

void sleep_ms(long ms) {
    timespec t{ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {}
}

}  // namespace

sampler& sampler::instance() {
    static sampler s;
    return s;
}

bool sampler::ensure_environment(JavaVM* vm, std::string& error) {
    if (jvmti_ != nullptr) return true;
    jvmtiEnv* env = nullptr;
    if (vm->GetEnv(reinterpret_cast<void**>(&env), JVMTI_VERSION_11) != JNI_OK || env == nullptr) {
        error = "this JVM has no JVMTI 11 (allocation sampling came with JDK 11)";
        return false;
    }
    jrawMonitorID lock = nullptr;
    if (env->CreateRawMonitor("heapd agent", &lock) != JVMTI_ERROR_NONE) {
        env->DisposeEnvironment();
        error = "cannot create the agent's monitor";
        return false;
    }
    jvmtiEventCallbacks callbacks{};
    callbacks.SampledObjectAlloc = &on_sample;
    callbacks.VMInit = &on_vm_init;
    callbacks.VMDeath = &on_vm_death;
    callbacks.ResourceExhausted = &on_resource_exhausted;
    env->SetEventCallbacks(&callbacks, sizeof callbacks);
    env->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, nullptr);
    env->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, nullptr);
    // Names for the frames of every table, kept for good (any number of environments may have them).
    jvmtiCapabilities names{};
    names.can_get_line_numbers = 1;
    names.can_get_source_file_name = 1;
    env->AddCapabilities(&names);
    lock_ = lock;
    jvmti_ = env;
    return true;
}

bool sampler::ensure_thread(JNIEnv* jni, std::string& error) {
    jvmti_->RawMonitorEnter(lock_);
    const bool started = thread_started_;
    jvmti_->RawMonitorExit(lock_);
    if (started) return true;
    jclass thread_class = jni->FindClass("java/lang/Thread");
    jmethodID init = thread_class ? jni->GetMethodID(thread_class, "<init>", "(Ljava/lang/String;)V") : nullptr;
    jstring name = init ? jni->NewStringUTF("heapd agent") : nullptr;
    jobject thread = name ? jni->NewObject(thread_class, init, name) : nullptr;
    if (thread == nullptr) {
        if (jni->ExceptionCheck()) jni->ExceptionClear();
        error = "cannot make the agent's thread";
        return false;
    }
    if (jvmti_->RunAgentThread(thread, &thread_main, this, JVMTI_THREAD_NORM_PRIORITY) != JVMTI_ERROR_NONE) {
        error = "cannot start the agent's thread";
        return false;
    }
    jvmti_->RawMonitorEnter(lock_);
    thread_started_ = true;
    jvmti_->RawMonitorExit(lock_);
    return true;
}

jint sampler::on_load(JavaVM* vm, const agent_options& options, const std::string& error) {
    if (!error.empty()) return JNI_ERR;  // the JVM says the agent failed to start; nothing installed
    std::string why;
    if (!ensure_environment(vm, why)) return JNI_ERR;
    if (options.what != command::start) return JNI_OK;
    why = start(options);
    return why.empty() ? JNI_OK : JNI_ERR;  // nothing is installed when start fails
}

jint sampler::on_attach(JavaVM* vm, const agent_options& options, const std::string& parse_error) {
    std::string error = parse_error;
    if (error.empty() && options.what == command::oom)
        error =
            "the OOM watch starts with the JVM (-agentpath:LIB=oom): a JVM gives breakpoints to no agent "
            "loaded later";
    if (error.empty() && options.protocol != protocol_version)
        error = "heapd speaks agent protocol " + std::to_string(options.protocol) + ", this agent (" +
                HEAPD_AGENT_VERSION + ") speaks " + std::to_string(protocol_version) +
                ": the JVM keeps the agent it loaded first until it exits";
    JNIEnv* jni = nullptr;
    if (error.empty() && (vm->GetEnv(reinterpret_cast<void**>(&jni), JNI_VERSION_1_6) != JNI_OK || jni == nullptr))
        error = "no JNI environment on the attach thread";
    if (error.empty()) ensure_environment(vm, error);
    if (error.empty()) ensure_thread(jni, error);
    if (!error.empty()) {
        answer_facts f;
        f.what = options.what;
        f.error = error;
        std::string write_error;
        bool written = !options.file.empty() && write_answer(options.file, answer_json(f, nullptr), write_error);
        return written || jvmti_ != nullptr ? JNI_OK : JNI_ERR;
    }
    hand_over(options, command_wait_ms);
    return JNI_OK;  // the answer file says how it went (none: the agent was too slow)
}

bool sampler::hand_over(const agent_options& options, int wait_ms) {
    // One command at a time; the agent thread copies it before this returns, or it is withdrawn.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    bool done = false;
    jvmti_->RawMonitorEnter(lock_);
    while (pending_ != nullptr && !dead_ && std::chrono::steady_clock::now() < deadline)
        jvmti_->RawMonitorWait(lock_, 50);
    if (pending_ == nullptr && !dead_) {
        pending_ = &options;
        const std::uint64_t ticket = ++issued_;
        jvmti_->RawMonitorNotifyAll(lock_);
        while (finished_ < ticket && !dead_ && std::chrono::steady_clock::now() < deadline)
            jvmti_->RawMonitorWait(lock_, 50);
        if (pending_ == &options) pending_ = nullptr;  // never taken: forget it before it dangles
        done = finished_ >= ticket;
    }
    jvmti_->RawMonitorExit(lock_);
    return done;
}

void JNICALL sampler::thread_main(jvmtiEnv* jvmti, JNIEnv* jni, void* arg) {
    sampler& s = *static_cast<sampler*>(arg);
    auto last_sweep = std::chrono::steady_clock::now();
    jvmti->RawMonitorEnter(s.lock_);
    while (!s.dead_) {
        if (s.pending_ == nullptr) jvmti->RawMonitorWait(s.lock_, s.wait_ms());
        if (s.dead_) break;
        if (s.pending_ != nullptr) {
            agent_options options = *s.pending_;
            s.pending_ = nullptr;
            const std::uint64_t ticket = s.issued_;
            jvmti->RawMonitorExit(s.lock_);
            s.run(jni, options);
            jvmti->RawMonitorEnter(s.lock_);
            s.finished_ = ticket;
            jvmti->RawMonitorNotifyAll(s.lock_);
            continue;
        }
        if (s.cpu_ && std::chrono::steady_clock::now() >= s.cpu_next_) {
            jvmti->RawMonitorExit(s.lock_);
            s.cpu_->sample(jvmti, jni);
            const auto now = std::chrono::steady_clock::now();
            s.cpu_next_ += std::chrono::milliseconds(s.cpu_period_ms_);
            if (s.cpu_next_ < now) s.cpu_next_ = now + std::chrono::milliseconds(s.cpu_period_ms_);  // fell behind
            jvmti->RawMonitorEnter(s.lock_);
        }
        if (s.sampling_ && s.tables_) {
            jvmti->RawMonitorExit(s.lock_);
            s.drain(jni);
            if (std::chrono::steady_clock::now() - last_sweep > std::chrono::seconds(1)) {
                s.tables_->sweep(jni);
                last_sweep = std::chrono::steady_clock::now();
            }
            jvmti->RawMonitorEnter(s.lock_);
        }
    }
    jvmti->RawMonitorExit(s.lock_);
}

void sampler::run(JNIEnv* jni, const agent_options& options) {
    answer_facts f;
    std::string text;
    switch (options.what) {
    case command::start: {
        std::string error = start(options);
        f = facts(command::start);
        f.error = error;
        text = answer_json(f, nullptr);
        break;
    }
    case command::show:
    case command::stop:
        if (!tables_) {
            f = facts(options.what);
            f.error = "not sampling";
            text = answer_json(f, nullptr);
            break;
        }
        if (options.what == command::stop) stop_sampling(jni);
        drain(jni);
        // A full collection clears the weak references of unreachable objects: live then means
        // reachable, as in a live heap dump, not merely not yet collected.
        if (options.gc) jvmti_->ForceGarbageCollection();
        tables_->sweep(jni);
        f = facts(options.what);
        text = answer_json(f, tables_.get());
        if (options.what == command::stop) {
            tables_->clear(jni);
            tables_.reset();
            if (active_.load() == 0)
                owned_ring_.reset();
            else
                owned_ring_.release();  // a callback still inside: leave it its memory
        }
        break;
    case command::status:
    case command::oom:  // refused by on_attach before it gets here
        text = answer_json(facts(command::status), nullptr);
        break;
    case command::cpu_start:
    case command::cpu_show:
    case command::cpu_stop: text = run_cpu(options); break;
    }
    std::string error;
    if (!options.file.empty()) write_answer(options.file, text, error);
}

std::string sampler::run_cpu(const agent_options& options) {
    answer_facts f;
    if (options.what == command::cpu_start) {
        std::string error;
        if (cpu_) {
            error = "already sampling CPU, every " + std::to_string(cpu_period_ms_) + " ms";
        } else {
            cpu_ = std::make_unique<cpu_table>(options.depth);
            cpu_period_ms_ = options.period_ms;
            cpu_started_ = cpu_next_ = std::chrono::steady_clock::now();
        }
        f = facts(command::cpu_start);
        f.error = error;
        return answer_json(f, nullptr);
    }
    if (!cpu_) {
        f = facts(options.what);
        f.error = "not sampling CPU";
        return answer_json(f, nullptr);
    }
    f = facts(options.what);
    std::string text = answer_json(f, nullptr, cpu_.get());
    if (options.what == command::cpu_stop) cpu_.reset();
    return text;
}

long sampler::wait_ms() const {
    long ms = sampling_ ? drain_ms : 1000;
    if (cpu_) {
        const auto until =
            std::chrono::duration_cast<std::chrono::milliseconds>(cpu_next_ - std::chrono::steady_clock::now());
        ms = std::min<long>(ms, std::max<long>(1, static_cast<long>(until.count())));
    }
    return ms;
}

std::string sampler::start(const agent_options& options) {
    if (sampling_)
        return "already sampling, every " + std::to_string(interval_) + " bytes: show the tables, or stop first";
    jvmtiCapabilities caps = sampling_capabilities();
    if (jvmti_->AddCapabilities(&caps) != JVMTI_ERROR_NONE) {
        jvmtiCapabilities potential{};
        jvmti_->GetPotentialCapabilities(&potential);
        if (!potential.can_generate_sampled_object_alloc_events)
            return "another JVMTI agent holds allocation sampling (can_generate_sampled_object_alloc_events is "
                   "one agent's at a time, e.g. async-profiler's alloc mode): stop it first";
        return "the JVM refused the capabilities for allocation sampling";
    }
    holds_capability_ = true;
    oom_answered_.store(false);
    owned_ring_ = std::make_unique<sample_ring>(ring_slots, options.depth);
    tables_ = std::make_unique<site_table>(options.interval);
    interval_ = options.interval;
    depth_ = options.depth;
    started_ = std::chrono::steady_clock::now();
    jvmti_->SetHeapSamplingInterval(static_cast<jint>(options.interval));
    ring_.store(owned_ring_.get());
    sampling_.store(true);
    jvmti_->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, nullptr);
    jvmti_->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_RESOURCE_EXHAUSTED, nullptr);
    return {};
}

void sampler::stop_sampling(JNIEnv* jni) {
    sampling_.store(false);
    jvmti_->SetEventNotificationMode(JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, nullptr);
    jvmti_->SetEventNotificationMode(JVMTI_DISABLE, JVMTI_EVENT_RESOURCE_EXHAUSTED, nullptr);
    for (int i = 0; i < 1000 && active_.load() != 0; ++i) sleep_ms(1);
    drain(jni);
    ring_.store(nullptr);
    if (holds_capability_) {
        jvmtiCapabilities caps = sampling_capabilities();
        jvmti_->RelinquishCapabilities(&caps);
        holds_capability_ = false;
    }
}

void sampler::drain(JNIEnv* jni) {
    if (!owned_ring_ || !tables_) return;
    owned_ring_->drain([&](sample_slot& s) { tables_->add(jvmti_, jni, s); });
}

answer_facts sampler::facts(command what) const {
    answer_facts f;
    f.what = what;
    f.sampling = sampling_.load();
    f.interval = interval_;
    f.depth = depth_;
    if (tables_) f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    if (owned_ring_) f.ring_dropped = owned_ring_->dropped();
    f.memory_bytes = memory_bytes();
    f.cpu_sampling = cpu_ != nullptr;
    f.cpu_period_ms = cpu_period_ms_;
    if (cpu_) f.cpu_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - cpu_started_).count();
    return f;
}

std::uint64_t sampler::memory_bytes() const {
    std::uint64_t bytes = owned_ring_ ? owned_ring_->bytes() : 0;
    if (tables_) bytes += tables_->memory_bytes();
    if (cpu_) bytes += cpu_->memory_bytes();
    return bytes;
}

void JNICALL sampler::on_sample(jvmtiEnv* jvmti, JNIEnv* jni, jthread, jobject object, jclass klass, jlong size) {
    sampler& s = instance();
    s.active_.fetch_add(1);
    sample_ring* ring = s.sampling_.load() ? s.ring_.load() : nullptr;
    sample_slot* slot = ring ? ring->claim() : nullptr;
    if (slot != nullptr) {
        slot->frame_count = 0;
        if (jvmti->GetStackTrace(nullptr, 0, ring->depth(), slot->frames, &slot->frame_count) != JVMTI_ERROR_NONE)
            slot->frame_count = 0;
        slot->size = size;
        slot->object = jni->NewWeakGlobalRef(object);
        slot->klass = jni->NewWeakGlobalRef(klass);
        if (slot->object != nullptr && slot->klass != nullptr) {
            sample_ring::publish(slot);
        } else {
            if (slot->object != nullptr) jni->DeleteWeakGlobalRef(slot->object);
            if (slot->klass != nullptr) jni->DeleteWeakGlobalRef(slot->klass);
            slot->object = slot->klass = nullptr;
            sample_ring::release(slot);
        }
    }
    s.active_.fetch_sub(1);
}

void JNICALL sampler::on_vm_init(jvmtiEnv*, JNIEnv* jni, jthread) {
    sampler& s = instance();
    std::string error;
    s.ensure_thread(jni, error);
}

// The first time the Java heap runs out while sampling, the table goes to oom_answer_path(), where
// heapd looks for it when it handles the OOM dump: the JVM may exit right after. The thread that
// ran out waits for it (oom_wait_ms at most); the JVM's own hook has already run.
void JNICALL sampler::on_resource_exhausted(jvmtiEnv*, JNIEnv*, jint flags, const void*, const char*) {
    sampler& s = instance();
    if ((flags & JVMTI_RESOURCE_EXHAUSTED_JAVA_HEAP) == 0 || !s.sampling_.load()) return;
    if (s.oom_answered_.exchange(true)) return;
    // HotSpot logs each event it posts as an error on the JVM's output: one line is enough.
    s.jvmti_->SetEventNotificationMode(JVMTI_DISABLE, JVMTI_EVENT_RESOURCE_EXHAUSTED, nullptr);
    agent_options show;
    show.what = command::show;
    show.file = oom_answer_path();
    s.hand_over(show, oom_wait_ms);
}

void JNICALL sampler::on_vm_death(jvmtiEnv* jvmti, JNIEnv*) {
    sampler& s = instance();
    s.sampling_.store(false);
    jvmti->SetEventNotificationMode(JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, nullptr);
    jvmti->RawMonitorEnter(s.lock_);
    s.dead_ = true;
    jvmti->RawMonitorNotifyAll(s.lock_);
    jvmti->RawMonitorExit(s.lock_);
}

}  // namespace heapd::agent
