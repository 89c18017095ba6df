#pragma once
// Reads java.lang.String objects and primitive field values out of instance data.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "formats/hprof/class_table.h"
#include "formats/hprof/heap_records.h"

namespace heapd {
inline namespace hprof {

// Decodes a String's value array to UTF-8: Latin-1 bytes (coder 0), UTF-16 bytes (coder 1,
// in the dumping machine's byte order, little-endian on x86), or a char[] (JDK 8 and older).
// Unpaired surrogates become U+FFFD. At most max_chars characters are decoded.
std::string decode_java_string(const primitive_array_view& value, std::uint8_t coder, std::size_t max_chars = 4096);

// The value of a primitive or reference field of an instance, widened to 64 bits; nullopt when
// the class has no such field or the data is too short for it.
std::optional<std::uint64_t> read_field(const class_table& classes, const instance_view& obj, std::string_view field);

// The String object's value array id and coder (0 when the class has no coder field), and, for
// Strings that hold a range of their array (JDK 6 and older, older Android: offset and count
// fields), that range in characters.
struct string_fields {
    std::uint64_t value_id = 0;
    std::uint8_t coder = 0;
    std::optional<std::uint32_t> offset, count;
};
std::optional<string_fields> read_string_fields(const class_table& classes, const instance_view& str);

// The part of a String's value array that holds its characters: the whole array, or the range
// offset and count name; nullopt when that range does not lie within the array.
std::optional<primitive_array_view> string_chars(const primitive_array_view& value, const string_fields& f);

}  // namespace hprof
}  // namespace heapd
