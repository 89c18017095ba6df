#pragma once
// HotSpot's hsperfdata file (the jvmstat counters every JVM publishes in /tmp/hsperfdata_<user>/<pid>),
// read in place: the prologue, then the entries as views into the bytes, values decoded on access.
//
// The layout (OpenJDK perfMemory.hpp, perfData.hpp): a 32-byte prologue (magic CA FE C0 C0, byte
// order 0 big / 1 little endian, major and minor version, accessible flag, used bytes, overflow,
// modification time stamp, offset of the first entry, number of entries), then entries one after
// the other, each a 20-byte header (entry length, name offset, vector length, data type, flags,
// units, variability, data offset) followed by its NUL-terminated name and its data. Every field but
// the magic is in the file's byte order. The JVM keeps writing the file while it runs: values
// change in place, and an entry may be added (the count is bumped before the entry is filled in).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace heapd {
inline namespace hsperf {

// The unit of a counter, numbered as HotSpot's PerfData::Units.
enum class hsperf_units : std::uint8_t { none = 1, bytes = 2, ticks = 3, events = 4, string = 5, hertz = 6 };

// How a counter may change over the JVM's life, numbered as HotSpot's PerfData::Variability.
enum class hsperf_variability : std::uint8_t { constant = 1, monotonic = 2, variable = 3 };

// The file's fixed header, decoded at one moment.
struct hsperf_prologue {
    static constexpr std::size_t size = 32;
    bool little_endian = false;
    std::uint8_t major = 0, minor = 0;
    bool accessible = false;     // 0 while the JVM is still creating its counters
    std::uint32_t used = 0;      // bytes of the file in use, prologue included
    std::uint32_t overflow = 0;  // bytes the JVM wanted beyond the file (counters it dropped)
    std::int64_t mod_time_stamp = 0;
    std::uint32_t entry_offset = 0;  // file offset of the first entry
    std::uint32_t num_entries = 0;
};

// One counter: views into the file; its value is read when asked for (the JVM updates it in place).
struct hsperf_entry {
    static constexpr std::size_t header_size = 20;
    std::uint64_t offset = 0;         // file offset of the entry header
    std::uint32_t length = 0;         // bytes of the entry, header, name and data included
    std::string_view name;            // "sun.gc.generation.0.space.0.used"
    char type = 0;                    // Java type letter: 'J' long, 'B' byte (strings are B vectors), ...
    std::uint8_t flags = 0;           // bit 0: a supported (public) counter
    std::uint8_t units = 0;           // an hsperf_units value (others are kept as found)
    std::uint8_t variability = 0;     // an hsperf_variability value
    std::uint32_t vector_length = 0;  // 0 for a scalar
    std::span<const std::byte> data;  // the value's bytes
    bool little_endian = false;

    // The value of a scalar long ('J'); nothing for other types.
    std::optional<std::int64_t> long_value() const;
    // The text of a byte vector ('B') up to its first NUL; nothing for other types.
    std::optional<std::string_view> string_value() const;
    bool is_string() const { return type == 'B' && vector_length > 0; }
};

// The entries read at one moment, sorted by name for lookups.
class hsperf_snapshot {
public:
    hsperf_snapshot() = default;
    hsperf_snapshot(std::vector<hsperf_entry> entries, bool complete);

    // All entries, by name.
    std::span<const hsperf_entry> entries() const { return entries_; }
    // False when the JVM was adding an entry as it was read (the entries before it are all there).
    bool complete() const { return complete_; }
    // The entry of that name, or nullptr.
    const hsperf_entry* find(std::string_view name) const;
    // A scalar long counter's value, if the counter exists and is one.
    std::optional<std::int64_t> long_value(std::string_view name) const;
    // A string counter's text, if the counter exists and is one.
    std::optional<std::string_view> string_value(std::string_view name) const;
    // Every entry whose name starts with prefix, in name order.
    std::span<const hsperf_entry> with_prefix(std::string_view prefix) const;

private:
    std::vector<hsperf_entry> entries_;
    bool complete_ = true;
};

// The most bytes of an hsperfdata file heapd reads: a JVM's is PerfDataMemorySize, 32 KiB by
// default (JDK 17 and 25 alike); a bigger one (the size raised 32-fold, or a file made to cost its
// reader memory) is not read.
inline constexpr std::size_t hsperf_max_file_bytes = std::size_t{1} << 20;

// A validated view of an hsperfdata file; the bytes (a read-only mapping) must outlive it and
// everything it hands out. It never writes to them.
class hsperf_data {
public:
    // Checks the prologue: size, magic, byte order, version 2, entry offset within the file.
    static result<hsperf_data> parse(std::span<const std::byte> bytes);

    // The prologue as it is now.
    hsperf_prologue prologue() const;
    // The entries as they are now (the count is read afresh, so entries added since are included),
    // each bounds-checked against the used part of the file and against its own length. An entry of
    // length zero, one the JVM is still writing, ends the list and marks it incomplete.
    result<std::vector<hsperf_entry>> entries() const;
    // entries() indexed by name.
    result<hsperf_snapshot> snapshot() const;

    std::span<const std::byte> bytes() const { return bytes_; }

private:
    explicit hsperf_data(std::span<const std::byte> bytes) : bytes_(bytes) {}
    result<std::vector<hsperf_entry>> read_entries(bool& complete) const;
    std::span<const std::byte> bytes_;
};

// The size in bytes of one element of a Java type letter ('J' 8, 'B' 1, ...), 0 for unknown letters.
std::size_t hsperf_type_size(char type);

}  // namespace hsperf
}  // namespace heapd
