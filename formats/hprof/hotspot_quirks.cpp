#include "formats/hprof/hotspot_quirks.h"

#include <array>
#include <limits>

namespace heapd {
inline namespace hprof {
namespace {

constexpr std::uint8_t t_object = 2, t_boolean = 4, t_byte = 8, t_short = 9, t_int = 10, t_long = 11;
constexpr unsigned newest = std::numeric_limits<unsigned>::max();

// The injected fields of each release, from its javaClasses.hpp (*_INJECTED_FIELDS).
constexpr injected_field string_injected[] = {{"flags", t_byte}};
// JDK 6 keeps three "fake" fields at hard-coded offsets at the start of every Class object.
constexpr injected_field class_fields_6[] = {
    {"klass", t_object}, {"array_klass", t_object}, {"resolved_constructor", t_object}};
constexpr injected_field class_fields_7[] = {{"klass", t_object},
                                             {"resolved_constructor", t_object},
                                             {"array_klass", t_object},
                                             {"oop_size", t_int},
                                             {"static_oop_field_count", t_int}};
constexpr injected_field class_fields_8[] = {{"klass", t_long, true},
                                             {"array_klass", t_long, true},
                                             {"oop_size", t_int},
                                             {"static_oop_field_count", t_int},
                                             {"protection_domain", t_object},
                                             {"init_lock", t_object},
                                             {"signers", t_object}};
constexpr injected_field class_fields_16[] = {
    {"klass", t_long, true},           {"array_klass", t_long, true},   {"oop_size", t_int},
    {"static_oop_field_count", t_int}, {"protection_domain", t_object}, {"signers", t_object},
    {"source_file", t_object}};
constexpr injected_field loader_fields[] = {{"loader_data", t_long, true}};
constexpr injected_field member_name_fields_7[] = {{"vmtarget", t_object}, {"vmindex", t_long, true}};
constexpr injected_field member_name_fields_8[] = {
    {"vmloader", t_object}, {"vmindex", t_long, true}, {"vmtarget", t_long, true}};
constexpr injected_field member_name_fields_10[] = {{"vmindex", t_long, true}};
constexpr injected_field resolved_method_fields[] = {{"vmholder", t_object}, {"vmtarget", t_long, true}};
constexpr injected_field call_site_context_fields[] = {{"vmdependencies", t_long, true},
                                                       {"last_cleanup", t_long, true}};
constexpr injected_field stack_frame_info_fields[] = {{"version", t_short}};
constexpr injected_field module_fields[] = {{"module_entry", t_long, true}};
constexpr injected_field internal_error_fields[] = {{"during_unsafe_access", t_boolean}};

// A class's injected fields in the releases first to last.
struct injected_entry {
    std::string_view class_name;
    unsigned first, last;
    std::span<const injected_field> fields;
};
constexpr injected_entry injected_table[] = {
    {"java/lang/String", 16, newest, string_injected},
    {"java/lang/Class", 0, 6, class_fields_6},
    {"java/lang/Class", 7, 7, class_fields_7},
    {"java/lang/Class", 8, 15, class_fields_8},
    {"java/lang/Class", 16, newest, class_fields_16},
    {"java/lang/ClassLoader", 8, newest, loader_fields},
    {"java/lang/invoke/MemberName", 7, 7, member_name_fields_7},
    {"java/lang/invoke/MemberName", 8, 9, member_name_fields_8},
    {"java/lang/invoke/MemberName", 10, newest, member_name_fields_10},
    {"java/lang/invoke/ResolvedMethodName", 10, newest, resolved_method_fields},
    {"java/lang/invoke/MethodHandleNatives$CallSiteContext", 9, newest, call_site_context_fields},
    {"java/lang/StackFrameInfo", 9, newest, stack_frame_info_fields},
    {"java/lang/Module", 9, newest, module_fields},
    {"java/lang/InternalError", 14, newest, internal_error_fields},
};

constexpr std::string_view thread_tlr[] = {"threadLocalRandomSeed", "threadLocalRandomProbe",
                                           "threadLocalRandomSecondarySeed"};
const contended_info thread_contended{false, thread_tlr};
const contended_info whole_class{true, {}};

struct contended_entry {
    std::string_view class_name;
    const contended_info* info;
};
// @Contended came with JDK 8, and these classes with it.
constexpr unsigned first_contended = 8;
const contended_entry contended_table[] = {
    {"java/lang/Thread", &thread_contended},
    {"java/util/concurrent/ConcurrentHashMap$CounterCell", &whole_class},
    {"java/util/concurrent/atomic/Striped64$Cell", &whole_class},
    {"java/util/concurrent/Exchanger$Node", &whole_class},
};

// ClassFileParser's list of classes with hard-coded field offsets (JDK 6 to 14).
constexpr std::string_view fixed_order[] = {
    "java/lang/AssertionStatusDirectives",
    "java/lang/Class",
    "java/lang/ClassLoader",
    "java/lang/ref/Reference",
    "java/lang/ref/SoftReference",
    "java/lang/StackTraceElement",
    "java/lang/String",
    "java/lang/Throwable",
    "java/lang/Boolean",
    "java/lang/Character",
    "java/lang/Float",
    "java/lang/Double",
    "java/lang/Byte",
    "java/lang/Short",
    "java/lang/Integer",
    "java/lang/Long",
};

}  // namespace

std::span<const injected_field> injected_fields(std::string_view class_name, unsigned java_feature) {
    for (const auto& e : injected_table)
        if (e.class_name == class_name && e.first <= java_feature && java_feature <= e.last) return e.fields;
    return {};
}

const contended_info* contended_layout(std::string_view class_name, unsigned java_feature) {
    if (java_feature < first_contended) return nullptr;
    for (const auto& e : contended_table)
        if (e.class_name == class_name) return e.info;
    return nullptr;
}

bool has_fixed_field_order(std::string_view class_name) {
    for (std::string_view n : fixed_order)
        if (n == class_name) return true;
    return false;
}

}  // namespace hprof
}  // namespace heapd
