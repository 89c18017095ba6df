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
// JVMTI's and JFR's per-thread state from JDK 19 (virtual threads); the two JVMTI counters from 21.
constexpr injected_field thread_fields_19[] = {{"jvmti_thread_state", t_long, true}, {"jfr_epoch", t_short}};
constexpr injected_field thread_fields_21[] = {{"jvmti_thread_state", t_long, true},
                                               {"jvmti_VTMS_transition_disable_count", t_int},
                                               {"jvmti_is_in_VTMS_transition", t_boolean},
                                               {"jfr_epoch", t_short}};

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
    {"java/lang/Thread", 19, 20, thread_fields_19},
    {"java/lang/Thread", 21, newest, thread_fields_21},
};

// @Contended groups by the names of their fields.
using group = std::span<const std::string_view>;
constexpr std::string_view thread_tlr[] = {"threadLocalRandomSeed", "threadLocalRandomProbe",
                                           "threadLocalRandomSecondarySeed"};
constexpr group thread_groups[] = {thread_tlr};
constexpr std::string_view pool_ctl[] = {"ctl", "parallelism"};  // parallelism joined in JDK 19 to 25
constexpr group pool_groups[] = {pool_ctl};
constexpr std::string_view queue_w_17[] = {"top", "source", "nsteals"};
constexpr group queue_groups_17[] = {queue_w_17};
constexpr std::string_view queue_w_25[] = {"top", "phase", "stackPred", "source", "nsteals", "parking"};
constexpr group queue_groups_25[] = {queue_w_25};
constexpr std::string_view subscription_c[] = {"demand", "waiting"};
constexpr group subscription_groups[] = {subscription_c};

const contended_info thread_contended{false, thread_groups};
const contended_info whole_class{true, {}};
const contended_info pool_contended{false, pool_groups};
const contended_info queue_contended_17{false, queue_groups_17};
const contended_info queue_contended_25{false, queue_groups_25};
const contended_info subscription_contended{true, subscription_groups};

// A class's @Contended facts in the releases first to last (@Contended came with JDK 8).
struct contended_entry {
    std::string_view class_name;
    unsigned first, last;
    const contended_info* info;
};
const contended_entry contended_table[] = {
    {"java/lang/Thread", 8, 18, &thread_contended},
    {"java/util/concurrent/ConcurrentHashMap$CounterCell", 8, newest, &whole_class},
    {"java/util/concurrent/atomic/Striped64$Cell", 8, newest, &whole_class},
    {"java/util/concurrent/Exchanger$Node", 8, 18, &whole_class},
    {"java/util/concurrent/Exchanger$Slot", 19, newest, &whole_class},
    {"java/util/concurrent/ForkJoinPool", 17, newest, &pool_contended},
    {"java/util/concurrent/ForkJoinPool$WorkQueue", 17, 18, &queue_contended_17},
    {"java/util/concurrent/ForkJoinPool$WorkQueue", 19, newest, &queue_contended_25},
    {"java/util/concurrent/SubmissionPublisher$BufferedSubscription", 17, newest, &subscription_contended},
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
    for (const auto& e : contended_table)
        if (e.class_name == class_name && e.first <= java_feature && java_feature <= e.last) return e.info;
    return nullptr;
}

bool has_fixed_field_order(std::string_view class_name) {
    for (std::string_view n : fixed_order)
        if (n == class_name) return true;
    return false;
}

}  // namespace hprof
}  // namespace heapd
