#include "formats/hprof/heap_records.h"

#include <cstdio>

namespace heapd {
inline namespace hprof {

const char* heap_tag_name(std::uint8_t tag) {
    switch (tag) {
    case 0xFF: return "ROOT_UNKNOWN";
    case 0x01: return "ROOT_JNI_GLOBAL";
    case 0x02: return "ROOT_JNI_LOCAL";
    case 0x03: return "ROOT_JAVA_FRAME";
    case 0x04: return "ROOT_NATIVE_STACK";
    case 0x05: return "ROOT_STICKY_CLASS";
    case 0x06: return "ROOT_THREAD_BLOCK";
    case 0x07: return "ROOT_MONITOR_USED";
    case 0x08: return "ROOT_THREAD_OBJECT";
    case 0x20: return "CLASS_DUMP";
    case 0x21: return "INSTANCE_DUMP";
    case 0x22: return "OBJ_ARRAY_DUMP";
    case 0x23: return "PRIM_ARRAY_DUMP";
    case 0x89: return "ROOT_INTERNED_STRING";
    case 0x8A: return "ROOT_FINALIZING";
    case 0x8B: return "ROOT_DEBUGGER";
    case 0x8C: return "ROOT_REFERENCE_CLEANUP";
    case 0x8D: return "ROOT_VM_INTERNAL";
    case 0x8E: return "ROOT_JNI_MONITOR";
    case 0x90: return "ROOT_UNREACHABLE";
    case 0xC3: return "PRIMITIVE_ARRAY_NODATA";
    case 0xFE: return "HEAP_DUMP_INFO";
    default: return nullptr;
    }
}

const char* root_kind_name(root_kind k) {
    static constexpr const char* names[root_kind_count] = {
        "unknown",           "jni_global",   "jni_local",     "java_frame",      "native_stack", "sticky_class",
        "thread_block",      "monitor_used", "thread_object", "interned_string", "finalizing",   "debugger",
        "reference_cleanup", "vm_internal",  "jni_monitor",   "unreachable"};
    return names[static_cast<unsigned>(k)];
}

result<void> heap_walk_error(std::uint8_t tag, std::uint64_t offset, bool overrun) {
    const char* name = heap_tag_name(tag);
    if (name == nullptr) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", tag);
        return fail(error_code::unknown_tag, std::string("unknown heap sub-record tag ") + hex, offset);
    }
    if (overrun)
        return fail(error_code::out_of_bounds,
                    std::string(name) + " sub-record runs past the end of its heap dump segment", offset);
    return fail(error_code::bad_value, std::string(name) + " sub-record holds an invalid basic type", offset);
}

}  // namespace hprof
}  // namespace heapd
