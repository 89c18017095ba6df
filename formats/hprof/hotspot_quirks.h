#pragma once
// What HotSpot lays out that a heap dump does not list, per Java release: injected fields, @Contended,
// and the boot classes whose fields older releases keep in a fixed order.
#include <cstdint>
#include <span>
#include <string_view>

namespace heapd {
inline namespace hprof {

// A field the VM adds to a class and the dumper leaves out; type is an HPROF basic type,
// with pointer-sized fields marked by intptr (long on 64-bit, int on 32-bit).
struct injected_field {
    std::string_view name;
    std::uint8_t type;
    bool intptr = false;
};

// The instance fields the JVM of Java release java_feature (6, 8, 17...) injects into a class named
// in slash form; empty for most classes.
std::span<const injected_field> injected_fields(std::string_view class_name, unsigned java_feature);

// How @Contended shapes a JDK class: the whole class padded, and some fields in padded groups.
struct contended_info {
    bool whole_class = false;
    std::span<const std::span<const std::string_view>> groups;  // each group's fields, by name
};

// The @Contended facts of a JDK class (honoured only for boot classes, from JDK 8), or nullptr.
// Read from the class files of JDK 17 and 25; JDK 19 to 24 are taken to be as JDK 25.
const contended_info* contended_layout(std::string_view class_name, unsigned java_feature);

// Bytes of padding HotSpot puts around contended fields (ContendedPaddingWidth).
inline constexpr std::uint32_t contended_padding = 128;

// Whether the JVM before JDK 15 lays out this boot class's fields references first and without
// filling gaps, because it knows their offsets in advance (java.lang.String, Class, Integer...).
bool has_fixed_field_order(std::string_view class_name);

}  // namespace hprof
}  // namespace heapd
