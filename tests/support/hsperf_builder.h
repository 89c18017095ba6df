#pragma once
// Writes synthetic hsperfdata files laid out as HotSpot writes them, for tests and fuzz seeds.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace heapd::test {

// Builds one hsperfdata file: a prologue, then entries with HotSpot's padding and alignment.
class hsperf_builder {
public:
    static constexpr std::uint8_t units_none = 1, units_bytes = 2, units_ticks = 3, units_events = 4, units_string = 5,
                                  units_hertz = 6;
    static constexpr std::uint8_t constant = 1, monotonic = 2, variable = 3;

    explicit hsperf_builder(bool little_endian = true, std::size_t file_size = 32768);

    // A scalar long counter.
    hsperf_builder& add_long(const std::string& name, std::int64_t value, std::uint8_t units = units_bytes,
                             std::uint8_t variability = variable);
    // A string: a byte vector of vector_length (default: the text and its NUL), NUL-padded.
    hsperf_builder& add_string(const std::string& name, const std::string& value, std::uint32_t vector_length = 0,
                               std::uint8_t variability = constant);
    hsperf_builder& accessible(bool on) {
        accessible_ = on;
        return *this;
    }
    hsperf_builder& version(std::uint8_t major, std::uint8_t minor) {
        major_ = major;
        minor_ = minor;
        return *this;
    }

    // The file: prologue, entries, zeros up to file_size (or just the used bytes if that is larger).
    std::vector<std::byte> build() const;
    // File offset of the i-th entry added (valid for build()'s output).
    std::uint64_t entry_offset(std::size_t i) const { return 32 + offsets_.at(i); }
    // Bytes used by the prologue and the entries.
    std::size_t used() const { return 32 + entries_.size(); }
    // Writes build() to path.
    void write(const std::string& path) const;

    // Stores v at offset in the builder's byte order (for damaging a built file).
    void put_u32(std::vector<std::byte>& file, std::size_t offset, std::uint32_t v) const;

private:
    void add_entry(const std::string& name, char type, std::uint8_t units, std::uint8_t variability,
                   std::uint32_t vector_length, const std::vector<std::byte>& data);
    bool little_endian_;
    std::size_t file_size_;
    bool accessible_ = true;
    std::uint8_t major_ = 2, minor_ = 0;
    std::vector<std::byte> entries_;    // the entries area, starting at file offset 32
    std::vector<std::size_t> offsets_;  // each entry's offset within entries_
};

}  // namespace heapd::test
