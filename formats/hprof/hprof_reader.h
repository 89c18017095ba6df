#pragma once
// The HPROF header and an iterator over top-level records, both as views into the dump's bytes.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "base/error.h"

namespace heapd {
inline namespace hprof {

// Top-level record tags of the HPROF format.
enum class record_tag : std::uint8_t {
    utf8 = 0x01,
    load_class = 0x02,
    unload_class = 0x03,
    frame = 0x04,
    trace = 0x05,
    alloc_sites = 0x06,
    heap_summary = 0x07,
    start_thread = 0x0A,
    end_thread = 0x0B,
    heap_dump = 0x0C,
    cpu_samples = 0x0D,
    control_settings = 0x0E,
    heap_dump_segment = 0x1C,
    heap_dump_end = 0x2C,
};

// The record's name as written in HPROF documentation, or nullptr for an unknown tag.
const char* record_tag_name(std::uint8_t tag);

// Facts from the file header.
struct hprof_header {
    std::string_view format;  // e.g. "JAVA PROFILE 1.0.2"
    unsigned id_size = 0;     // 4 or 8
    std::uint64_t timestamp_ms = 0;
    std::uint64_t header_bytes = 0;
};

// One top-level record: tag, time and a body view bounded by the record's own length.
struct hprof_record {
    std::uint8_t tag = 0;
    std::uint32_t time_delta = 0;
    std::uint64_t offset = 0;       // file offset of the record header
    std::uint64_t body_offset = 0;  // file offset of the body
    std::span<const std::byte> body;
    bool truncated = false;  // the declared length ran past the end of the file
};

// Parses the header of an HPROF image held in memory and walks its records without copying.
class hprof_reader {
public:
    static result<hprof_reader> parse(std::span<const std::byte> data);

    const hprof_header& header() const { return header_; }
    std::span<const std::byte> data() const { return data_; }
    unsigned id_size() const { return header_.id_size; }

    // Forward cursor over top-level records.
    class cursor {
    public:
        explicit cursor(const hprof_reader& r) : reader_(&r), pos_(r.header_.header_bytes) {}
        // The next record, nullopt at a clean end of file, or an error for a cut record header.
        // A record whose body runs past the end comes back with truncated set; nothing follows it.
        result<std::optional<hprof_record>> next();
        std::uint64_t position() const { return pos_; }

    private:
        const hprof_reader* reader_;
        std::uint64_t pos_;
    };
    cursor records() const { return cursor(*this); }

private:
    std::span<const std::byte> data_;
    hprof_header header_;
};

}  // namespace hprof
}  // namespace heapd
