#include "agent/method_table.h"

#include <algorithm>
#include <iterator>
#include <limits>

namespace heapd::agent {

std::string take_string(jvmtiEnv* jvmti, char* s) {
    if (s == nullptr) return {};
    std::string out(s);
    jvmti->Deallocate(reinterpret_cast<unsigned char*>(s));
    return out;
}

namespace {

// The line of a location in a method (-2: a native method, -1: unknown).
std::int32_t line_of(const method_info& m, jlocation at) {
    if (at < 0) return -2;
    auto it = std::upper_bound(m.lines.begin(), m.lines.end(), std::make_pair(at, std::numeric_limits<jint>::max()));
    if (it == m.lines.begin()) return -1;
    return std::prev(it)->second;
}

}  // namespace

site_frame method_table::frame(jvmtiEnv* jvmti, const jvmtiFrameInfo& f) {
    const std::uint32_t m = index(jvmti, f.method);
    if (m == no_method) return {no_method, -1};
    return {m, line_of(methods_[m], f.location)};
}

std::uint32_t method_table::index(jvmtiEnv* jvmti, jmethodID method) {
    if (auto it = ids_.find(method); it != ids_.end()) return it->second;
    if (methods_.size() >= max_methods) return no_method;
    method_info m;
    char *name = nullptr, *descriptor = nullptr;
    if (jvmti->GetMethodName(method, &name, &descriptor, nullptr) != JVMTI_ERROR_NONE) return no_method;
    m.name = take_string(jvmti, name);
    m.descriptor = take_string(jvmti, descriptor);
    jclass declaring = nullptr;
    if (jvmti->GetMethodDeclaringClass(method, &declaring) == JVMTI_ERROR_NONE) {
        char* signature = nullptr;
        if (jvmti->GetClassSignature(declaring, &signature, nullptr) == JVMTI_ERROR_NONE)
            m.klass = take_string(jvmti, signature);
        char* file = nullptr;
        if (jvmti->GetSourceFileName(declaring, &file) == JVMTI_ERROR_NONE) m.file = take_string(jvmti, file);
    }
    jint count = 0;
    jvmtiLineNumberEntry* table = nullptr;
    if (jvmti->GetLineNumberTable(method, &count, &table) == JVMTI_ERROR_NONE) {
        m.lines.reserve(static_cast<std::size_t>(count));
        for (jint i = 0; i < count; ++i) m.lines.emplace_back(table[i].start_location, table[i].line_number);
        jvmti->Deallocate(reinterpret_cast<unsigned char*>(table));
        std::sort(m.lines.begin(), m.lines.end());
    }
    auto index = static_cast<std::uint32_t>(methods_.size());
    methods_.push_back(std::move(m));
    ids_.emplace(method, index);
    return index;
}

std::uint64_t method_table::memory_bytes() const {
    std::uint64_t bytes = methods_.size() * 150;
    for (const method_info& m : methods_)
        bytes += m.klass.size() + m.name.size() + m.descriptor.size() + m.file.size() + m.lines.size() * 16;
    return bytes;
}

void method_table::clear() {
    methods_.clear();
    methods_.shrink_to_fit();
    ids_.clear();
}

}  // namespace heapd::agent
