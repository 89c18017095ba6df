#include "formats/hprof/java_strings.h"

namespace heapd {
inline namespace hprof {
namespace {

void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

// UTF-16 code units to UTF-8, pairing surrogates.
template <class Unit>
std::string utf16_to_utf8(std::size_t n, Unit unit) {
    std::string out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::uint32_t u = unit(i);
        if (u >= 0xD800 && u < 0xDC00 && i + 1 < n) {
            std::uint32_t lo = unit(i + 1);
            if (lo >= 0xDC00 && lo < 0xE000) {
                append_utf8(out, 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
                ++i;
                continue;
            }
        }
        append_utf8(out, (u >= 0xD800 && u < 0xE000) ? 0xFFFD : u);
    }
    return out;
}

}  // namespace

std::string decode_java_string(const primitive_array_view& value, std::uint8_t coder, std::size_t max_chars) {
    const std::byte* p = value.data.data();
    if (value.type == 5) {  // char[]: big-endian code units in the dump
        std::size_t n = std::min<std::size_t>(value.data.size() / 2, max_chars);
        return utf16_to_utf8(n, [&](std::size_t i) { return be::u2(p + 2 * i); });
    }
    if (value.type != 8) return {};
    if (coder == 0) {  // Latin-1
        std::size_t n = std::min(value.data.size(), max_chars);
        std::string out;
        out.reserve(n);
        for (std::size_t i = 0; i < n; ++i) append_utf8(out, static_cast<std::uint8_t>(p[i]));
        return out;
    }
    // UTF-16 in byte[]: the JVM's native order; HotSpot on x86 and aarch64 is little-endian.
    std::size_t n = std::min<std::size_t>(value.data.size() / 2, max_chars);
    return utf16_to_utf8(n, [&](std::size_t i) {
        return static_cast<std::uint32_t>(static_cast<std::uint8_t>(p[2 * i])) |
               static_cast<std::uint32_t>(static_cast<std::uint8_t>(p[2 * i + 1])) << 8;
    });
}

std::optional<std::uint64_t> read_field(const class_table& classes, const instance_view& obj, std::string_view field) {
    auto slot = classes.find_field(obj.class_id, field);
    if (!slot) return std::nullopt;
    unsigned size = value_size(slot->type, classes.index().id_size());
    if (std::size_t{slot->offset} + size > obj.data.size()) return std::nullopt;
    const std::byte* p = obj.data.data() + slot->offset;
    switch (size) {
    case 1: return be::u1(p);
    case 2: return be::u2(p);
    case 4: return be::u4(p);
    default: return be::u8(p);
    }
}

std::optional<string_fields> read_string_fields(const class_table& classes, const instance_view& str) {
    auto value = read_field(classes, str, "value");
    if (!value) return std::nullopt;
    string_fields f;
    f.value_id = *value;
    if (auto coder = read_field(classes, str, "coder")) f.coder = static_cast<std::uint8_t>(*coder);
    auto offset = read_field(classes, str, "offset");
    auto count = read_field(classes, str, "count");
    if (offset && count) {
        f.offset = static_cast<std::uint32_t>(*offset);
        f.count = static_cast<std::uint32_t>(*count);
    }
    return f;
}

std::optional<primitive_array_view> string_chars(const primitive_array_view& value, const string_fields& f) {
    if (!f.offset || !f.count) return value;
    // A character is one byte only in a Latin-1 byte[] (coder 0); Strings with ranges hold char[].
    const std::uint64_t unit = value.type == 8 && f.coder == 0 ? 1 : 2;
    const std::uint64_t begin = std::uint64_t{*f.offset} * unit, bytes = std::uint64_t{*f.count} * unit;
    // offset and count are Java ints: a negative one reads as above 2^31 and fails here.
    if (begin + bytes > value.data.size()) return std::nullopt;
    primitive_array_view part = value;
    part.data = value.data.subspan(begin, bytes);
    part.length = *f.count;
    return part;
}

}  // namespace hprof
}  // namespace heapd
