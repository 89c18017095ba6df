#include "formats/hprof/hotspot_quirks.h"

#include <array>

namespace heapd {
namespace {

constexpr std::uint8_t t_object = 2, t_boolean = 4, t_byte = 8, t_short = 9, t_int = 10, t_long = 11;

constexpr injected_field string_fields[] = {{"flags", t_byte}};
constexpr injected_field class_fields[] = {
    {"klass", t_long, true},           {"array_klass", t_long, true},   {"oop_size", t_int},
    {"static_oop_field_count", t_int}, {"protection_domain", t_object}, {"signers", t_object},
    {"source_file", t_object}};
constexpr injected_field loader_fields[] = {{"loader_data", t_long, true}};
constexpr injected_field resolved_method_fields[] = {{"vmholder", t_object}, {"vmtarget", t_long, true}};
constexpr injected_field member_name_fields[] = {{"vmindex", t_long, true}};
constexpr injected_field call_site_context_fields[] = {{"vmdependencies", t_long, true},
                                                       {"last_cleanup", t_long, true}};
constexpr injected_field stack_frame_info_fields[] = {{"version", t_short}};
constexpr injected_field module_fields[] = {{"module_entry", t_long, true}};
constexpr injected_field internal_error_fields[] = {{"during_unsafe_access", t_boolean}};

struct injected_entry {
    std::string_view class_name;
    std::span<const injected_field> fields;
};
constexpr injected_entry injected_table[] = {
    {"java/lang/String", string_fields},
    {"java/lang/Class", class_fields},
    {"java/lang/ClassLoader", loader_fields},
    {"java/lang/invoke/ResolvedMethodName", resolved_method_fields},
    {"java/lang/invoke/MemberName", member_name_fields},
    {"java/lang/invoke/MethodHandleNatives$CallSiteContext", call_site_context_fields},
    {"java/lang/StackFrameInfo", stack_frame_info_fields},
    {"java/lang/Module", module_fields},
    {"java/lang/InternalError", internal_error_fields},
};

constexpr std::string_view thread_tlr[] = {"threadLocalRandomSeed", "threadLocalRandomProbe",
                                           "threadLocalRandomSecondarySeed"};
const contended_info thread_contended{false, thread_tlr};
const contended_info whole_class{true, {}};

struct contended_entry {
    std::string_view class_name;
    const contended_info* info;
};
const contended_entry contended_table[] = {
    {"java/lang/Thread", &thread_contended},
    {"java/util/concurrent/ConcurrentHashMap$CounterCell", &whole_class},
    {"java/util/concurrent/atomic/Striped64$Cell", &whole_class},
    {"java/util/concurrent/Exchanger$Node", &whole_class},
};

}  // namespace

std::span<const injected_field> injected_fields(std::string_view class_name) {
    for (const auto& e : injected_table)
        if (e.class_name == class_name) return e.fields;
    return {};
}

const contended_info* contended_layout(std::string_view class_name) {
    for (const auto& e : contended_table)
        if (e.class_name == class_name) return e.info;
    return nullptr;
}

}  // namespace heapd
