#pragma once
// Duplicate strings for the waste report: java.lang.String objects grouped by contents (value
// array bytes and coder, hashed, then compared), and what keeping one of each would save.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/big_memory.h"
#include "formats/hprof/heap_records.h"
#include "formats/hprof/object_layout.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace analysis {

// Characters of a duplicate string's contents shown in the report before it is cut with "...".
inline constexpr unsigned string_display_chars = 50;

// Collects Strings and the arrays that may be their values during one walk over the heap, in any
// order, then joins each String to its value array by sorting both by id, and groups equal
// contents. A group of copies Strings over arrays distinct value arrays that each String holds
// whole saves (copies - 1) × String + (arrays - 1) × value array: Strings already sharing an array
// cost only the String, and an array a String holds only part of (JDK 6's substrings) may hold
// other Strings' characters too, so it counts as saved by nothing. Memory: 16 bytes per String
// (value array id, size and coder), 24 per byte[] or char[] (id, a view of its bytes), and while
// grouping 32 per String whose array was found (its contents' hash and first bytes, a sort
// entry); nothing per other object.
class duplicate_strings {
public:
    // Room for this many Strings and text arrays without growing.
    void reserve(std::size_t strings, std::size_t arrays);
    // A String whose value field holds value_id (0: null, ignored), with its coder and shallow size;
    // its characters are the whole array, or count characters from offset.
    void add_string(std::uint64_t value_id, std::uint8_t coder, std::uint32_t string_size);
    void add_string(std::uint64_t value_id, std::uint8_t coder, std::uint32_t string_size, std::uint32_t offset,
                    std::uint32_t count);
    // Offers a primitive array; byte[] and char[] with their data are kept (a view: the dump must
    // stay mapped until finish), others ignored. zero: every element is zero.
    void add_array(const primitive_array_view& v, bool zero = false);
    // Per primitive type, the arrays of zeros that are a String's value (count, shallow bytes),
    // which the zero-filled arrays leave to the strings.
    std::array<std::pair<std::uint64_t, std::uint64_t>, 12> zero_values(const vm_layout& vm) const;
    // Fills r's duplicate-string totals and its top groups by saving (top 0: all). Strings whose
    // value is missing, not a byte[] or char[], or without data, or whose range does not lie within
    // their array are left out.
    void finish(const vm_layout& vm, unsigned top, waste_report& r) const;

private:
    // A String: its value array's id, shallow size and coder (size << 8 | coder), and its range in
    // characters (an index into ranges_; whole_array: all of the array).
    static constexpr std::uint32_t whole_array = ~std::uint32_t{0};
    struct string_rec {
        std::uint64_t value;
        std::uint32_t size_coder;
        std::uint32_t range = whole_array;
    };
    // A byte[] or char[] with its data.
    struct array_rec {
        std::uint64_t id;
        const std::byte* data;
        std::uint32_t bytes;  // of data
        std::uint8_t type;    // 5 (char[]) or 8 (byte[])
        bool zero;
    };
    // Characters of one String: begin and bytes within its value array's data, their coder and
    // the array's type; their first 8 bytes (zeros after the last), so that short contents compare
    // without reading the dump.
    struct chars {
        std::uint64_t prefix;
        std::uint32_t array, begin, bytes;
        std::uint8_t coder, type;
    };
    // One group of equal contents.
    struct group {
        std::uint64_t saving, copies;
        chars contents;  // where a String of the group has them
    };
    // A String whose characters were found, keyed by contents, with all that grouping reads of it,
    // so that walking the sorted entries does not jump about the Strings and arrays.
    struct keyed_string {
        std::uint64_t key;
        std::uint64_t prefix;        // the first 8 bytes of the contents (chars::prefix)
        std::uint32_t array;         // index into arrays_
        std::uint32_t begin, bytes;  // of the array's data
        std::uint16_t size;          // the String's shallow size (at most 65535)
        std::uint8_t coder;
        std::uint8_t kind;  // the array's type, | first_whole for the first String of its array to hold it whole
        static constexpr std::uint8_t first_whole = 0x80;
        chars contents() const {
            return {prefix, array, begin, bytes, coder, static_cast<std::uint8_t>(kind & ~first_whole)};
        }
    };
    std::span<const std::byte> bytes_of(const chars& c) const;
    // Sorts the Strings by value id and the arrays by id, once.
    void sort_by_id() const;
    // Calls each(string, array index) for every String whose value array was offered, in value id order.
    template <class Each>
    void join(Each&& each) const;
    // The Strings whose characters were found, sorted so that equal keys lie together.
    big_vector<keyed_string> sorted_strings() const;
    std::vector<group> groups(const vm_layout& vm, waste_report& r) const;

    mutable big_vector<string_rec> strings_;
    mutable big_vector<array_rec> arrays_;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges_;  // offset, count in characters
    mutable bool sorted_ = true;
};

// A Java string's contents for display: at most max_chars characters, control characters, quotes
// and backslashes escaped as in Java source (\n, \t, \", \\, \u0001), "..." appended when cut.
std::string display_java_string(const primitive_array_view& value, std::uint8_t coder, unsigned max_chars);

}  // namespace analysis
}  // namespace heapd
