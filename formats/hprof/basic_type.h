#pragma once
// HPROF basic types: the type byte of fields, statics and primitive arrays.
#include <cstdint>
#include <string_view>

namespace heapd {
inline namespace hprof {

// The type codes HPROF uses for values; object is a reference of identifier size.
enum class basic_type : std::uint8_t {
    object = 2,
    boolean = 4,
    char_ = 5,
    float_ = 6,
    double_ = 7,
    byte = 8,
    short_ = 9,
    int_ = 10,
    long_ = 11,
};

// Bytes a value of this type takes in the dump (object: id_size); 0 for an invalid code.
inline unsigned value_size(std::uint8_t type, unsigned id_size) {
    switch (type) {
    case 2: return id_size;
    case 4:
    case 8: return 1;
    case 5:
    case 9: return 2;
    case 6:
    case 10: return 4;
    case 7:
    case 11: return 8;
    default: return 0;
    }
}

// True for the eight primitive codes.
inline bool is_primitive(std::uint8_t type) { return type >= 4 && type <= 11; }

// The Java source name of a primitive type ("int"), or "" for anything else.
inline std::string_view primitive_name(std::uint8_t type) {
    switch (type) {
    case 4: return "boolean";
    case 5: return "char";
    case 6: return "float";
    case 7: return "double";
    case 8: return "byte";
    case 9: return "short";
    case 10: return "int";
    case 11: return "long";
    default: return "";
    }
}

}  // namespace hprof
}  // namespace heapd
