#pragma once
// Duplicate strings for the waste report: java.lang.String objects grouped by contents (value
// array bytes and coder, hashed, then compared), and what keeping one of each would save.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/big_memory.h"
#include "formats/hprof/heap_records.h"
#include "formats/hprof/id_map.h"
#include "formats/hprof/object_layout.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace analysis {

// Characters of a duplicate string's contents shown in the report before it is cut with "...".
inline constexpr unsigned string_display_chars = 50;

// Collects Strings during one walk over the heap and their value arrays during the next, then
// groups equal contents. A group of copies Strings over arrays distinct value arrays that each
// String holds whole saves (copies - 1) × String + (arrays - 1) × value array: Strings already
// sharing an array cost only the String, and an array a String holds only part of (JDK 6's
// substrings) may hold other Strings' characters too, so it counts as saved by nothing. Memory:
// about 96 bytes per String (value array id, a view of its bytes and their hash, its range, a sort
// entry); nothing per other object.
class duplicate_strings {
public:
    // Room for this many Strings without growing.
    void reserve(std::size_t strings);
    // A String whose value field holds value_id (0: null, ignored), with its coder and shallow size;
    // its characters are the whole array, or count characters from offset.
    void add_string(std::uint64_t value_id, std::uint8_t coder, std::uint32_t string_size);
    void add_string(std::uint64_t value_id, std::uint8_t coder, std::uint32_t string_size, std::uint32_t offset,
                    std::uint32_t count);
    // Offers any primitive array; true when it is the value of a String added before (then its
    // view is kept: the dump must stay mapped until finish).
    bool add_array(const primitive_array_view& v);
    // Fills r's duplicate-string totals and its top groups by saving (top 0: all). Strings whose
    // value is missing, not a byte[] or char[], or without data, or whose range does not lie within
    // their array are left out.
    void finish(const vm_layout& vm, unsigned top, waste_report& r) const;

private:
    // A String: its value array (index into arrays_), shallow size, coder, and range in characters
    // (count whole_array: all of it).
    static constexpr std::uint32_t whole_array = ~std::uint32_t{0};
    struct string_rec {
        std::uint32_t array;
        std::uint32_t size;
        std::uint32_t offset = 0, count = whole_array;
        std::uint8_t coder;
    };
    // A value array, filled in by add_array.
    struct array_rec {
        const std::byte* data = nullptr;
        std::uint64_t hash = 0;
        std::uint32_t bytes = 0;  // of data
        std::uint8_t type = 0;    // 5 (char[]) or 8 (byte[]); 0 until found, or when unusable
        std::uint32_t length() const { return type == 5 ? bytes / 2 : bytes; }
    };
    // Characters of one String: begin and bytes within its value array's data.
    struct chars {
        std::uint32_t array, begin, bytes;
        std::uint8_t coder;
    };
    // One group of equal contents.
    struct group {
        std::uint64_t saving, copies;
        chars contents;  // where a String of the group has them
    };
    // A String whose characters were found, keyed by contents. Its size and coder travel in the
    // entry (size << 8 | coder), so that walking the sorted entries does not jump about the Strings.
    struct keyed_string {
        std::uint64_t key;
        std::uint32_t array, size_coder;
        std::uint32_t begin, bytes;  // of the array's data
        std::uint32_t size() const { return size_coder >> 8; }
        std::uint8_t coder() const { return static_cast<std::uint8_t>(size_coder); }
        chars contents() const { return {array, begin, bytes, coder()}; }
    };
    std::span<const std::byte> bytes_of(const chars& c) const;
    // The Strings whose characters were found, sorted so that equal keys, and in them each array's
    // Strings, lie together.
    big_vector<keyed_string> sorted_strings() const;
    std::vector<group> groups(const vm_layout& vm, waste_report& r) const;

    big_vector<string_rec> strings_;
    big_vector<array_rec> arrays_;
    id_map<std::uint32_t> array_of_;  // value array id -> index into arrays_
};

// A Java string's contents for display: at most max_chars characters, control characters, quotes
// and backslashes escaped as in Java source (\n, \t, \", \\, \u0001), "..." appended when cut.
std::string display_java_string(const primitive_array_view& value, std::uint8_t coder, unsigned max_chars);

}  // namespace analysis
}  // namespace heapd
