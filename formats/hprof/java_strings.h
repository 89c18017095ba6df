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

// Decodes a String's value array to UTF-8: Latin-1 bytes (coder 0), UTF-16 bytes (coder 1,
// in the dumping machine's byte order, little-endian on x86), or a char[] (JDK 8 and older).
// Unpaired surrogates become U+FFFD. At most max_chars characters are decoded.
std::string decode_java_string(const primitive_array_view& value, std::uint8_t coder, std::size_t max_chars = 4096);

// The value of a primitive or reference field of an instance, widened to 64 bits; nullopt when
// the class has no such field or the data is too short for it.
std::optional<std::uint64_t> read_field(const class_table& classes, const instance_view& obj, std::string_view field);

// The String object's value array id and coder (0 when the class has no coder field).
struct string_fields {
    std::uint64_t value_id = 0;
    std::uint8_t coder = 0;
};
std::optional<string_fields> read_string_fields(const class_table& classes, const instance_view& str);

}  // namespace heapd
