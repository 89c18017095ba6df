#include "agent/site_table.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace heapd::agent {
namespace {

constexpr std::uint32_t none = ~std::uint32_t{0};

// Appends the bytes of a value to a key.
template <typename T>
void append_bytes(std::string& key, const T& value) {
    key.append(reinterpret_cast<const char*>(&value), sizeof value);
}

}  // namespace

estimate estimate_of(jlong size, std::int64_t interval) {
    const double s = static_cast<double>(size);
    if (interval <= 0 || s <= 0) return {1.0, s};
    const double p = -std::expm1(-s / static_cast<double>(interval));
    return {1.0 / p, s / p};
}

std::uint32_t site_table::class_index(jvmtiEnv* jvmti, JNIEnv* jni, jweak klass) {
    jobject local = klass == nullptr ? nullptr : jni->NewLocalRef(klass);
    if (local == nullptr) return none;  // the class was unloaded since
    char* signature = nullptr;
    jvmtiError e = jvmti->GetClassSignature(static_cast<jclass>(local), &signature, nullptr);
    jni->DeleteLocalRef(local);
    if (e != JVMTI_ERROR_NONE) return none;
    std::string name = take_string(jvmti, signature);
    if (auto it = class_ids_.find(name); it != class_ids_.end()) return it->second;
    if (class_names_.size() >= max_classes) return none;
    auto index = static_cast<std::uint32_t>(class_names_.size());
    class_ids_.emplace(name, index);
    class_names_.push_back(std::move(name));
    return index;
}

void site_table::add(jvmtiEnv* jvmti, JNIEnv* jni, sample_slot& s) {
    ++samples_;
    std::uint32_t klass = class_index(jvmti, jni, s.klass);
    if (s.klass != nullptr) jni->DeleteWeakGlobalRef(s.klass);
    s.klass = nullptr;
    std::string key;
    std::vector<site_frame> frames;
    bool readable = klass != none;
    for (jint i = 0; readable && i < s.frame_count; ++i) {
        site_frame f = methods_.frame(jvmti, s.frames[i]);
        if (f.method == no_method)
            readable = false;
        else
            frames.push_back(f);
    }
    std::uint32_t at = none;
    if (readable) {
        append_bytes(key, klass);
        for (const site_frame& f : frames) {
            append_bytes(key, f.method);
            append_bytes(key, f.line);
        }
        if (auto it = site_ids_.find(key); it != site_ids_.end()) {
            at = it->second;
        } else if (sites_.size() < max_sites) {
            at = static_cast<std::uint32_t>(sites_.size());
            sites_.push_back({klass, std::move(frames)});
            site_ids_.emplace(std::move(key), at);
        } else {
            ++dropped_.sites;
        }
    } else {
        ++dropped_.classes;
    }
    if (at != none) {
        site& here = sites_[at];
        estimate e = estimate_of(s.size, interval_);
        ++here.samples;
        here.objects += e.objects;
        here.bytes += e.bytes;
    }
    if (at != none && live_.size() < max_live_samples) {
        live_.push_back({s.object, at, s.size});
    } else {
        if (at != none) ++dropped_.live;
        if (s.object != nullptr) jni->DeleteWeakGlobalRef(s.object);
    }
    s.object = nullptr;
}

void site_table::sweep(JNIEnv* jni) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < live_.size(); ++i) {
        if (live_[i].object == nullptr || jni->IsSameObject(live_[i].object, nullptr)) {
            if (live_[i].object != nullptr) jni->DeleteWeakGlobalRef(live_[i].object);
            continue;
        }
        live_[kept++] = live_[i];
    }
    live_.resize(kept);
}

std::uint64_t site_table::memory_bytes() const {
    std::uint64_t bytes = class_names_.size() * 80 + methods_.memory_bytes() + sites_.size() * 100 +
                          live_.capacity() * sizeof(live_sample);
    for (const std::string& c : class_names_) bytes += c.size();
    for (const site& s : sites_) bytes += s.frames.size() * sizeof(site_frame);
    return bytes;
}

void site_table::clear(JNIEnv* jni) {
    for (live_sample& l : live_)
        if (l.object != nullptr) jni->DeleteWeakGlobalRef(l.object);
    live_.clear();
    live_.shrink_to_fit();
    sites_.clear();
    sites_.shrink_to_fit();
    site_ids_.clear();
    methods_.clear();
    class_names_.clear();
    class_names_.shrink_to_fit();
    class_ids_.clear();
    samples_ = 0;
    dropped_ = {};
}

}  // namespace heapd::agent
