#include "formats/hprof/hprof_reader.h"

#include <cstring>

#include "formats/hprof/big_endian.h"

namespace heapd {
inline namespace hprof {

const char* record_tag_name(std::uint8_t tag) {
    switch (static_cast<record_tag>(tag)) {
    case record_tag::utf8: return "UTF8";
    case record_tag::load_class: return "LOAD_CLASS";
    case record_tag::unload_class: return "UNLOAD_CLASS";
    case record_tag::frame: return "FRAME";
    case record_tag::trace: return "TRACE";
    case record_tag::alloc_sites: return "ALLOC_SITES";
    case record_tag::heap_summary: return "HEAP_SUMMARY";
    case record_tag::start_thread: return "START_THREAD";
    case record_tag::end_thread: return "END_THREAD";
    case record_tag::heap_dump: return "HEAP_DUMP";
    case record_tag::cpu_samples: return "CPU_SAMPLES";
    case record_tag::control_settings: return "CONTROL_SETTINGS";
    case record_tag::heap_dump_segment: return "HEAP_DUMP_SEGMENT";
    case record_tag::heap_dump_end: return "HEAP_DUMP_END";
    }
    return nullptr;
}

result<hprof_reader> hprof_reader::parse(std::span<const std::byte> data) {
    static constexpr std::string_view prefix = "JAVA PROFILE ";
    const auto* chars = reinterpret_cast<const char*>(data.data());
    if (data.size() < prefix.size() || std::memcmp(chars, prefix.data(), prefix.size()) != 0)
        return fail(error_code::bad_magic, "not an HPROF file: it does not start with \"JAVA PROFILE \"", 0);
    const void* nul = std::memchr(chars, 0, std::min<std::size_t>(data.size(), 64));
    if (nul == nullptr) return fail(error_code::bad_magic, "HPROF format string is not terminated within 64 bytes", 0);
    std::size_t format_len = static_cast<const char*>(nul) - chars;
    std::string_view format(chars, format_len);
    if (format != "JAVA PROFILE 1.0.1" && format != "JAVA PROFILE 1.0.2" && format != "JAVA PROFILE 1.0.3")
        return fail(error_code::bad_header, "unsupported HPROF version \"" + std::string(format) + "\"", 0);
    std::uint64_t pos = format_len + 1;
    if (data.size() < pos + 12) return fail(error_code::out_of_bounds, "HPROF header is cut short", pos);
    hprof_reader r;
    r.data_ = data;
    r.header_.format = format;
    std::uint32_t id_size = be::u4(data.data() + pos);
    if (id_size != 4 && id_size != 8)
        return fail(error_code::bad_header, "identifier size " + std::to_string(id_size) + " is not 4 or 8", pos);
    r.header_.id_size = id_size;
    r.header_.timestamp_ms = be::u8(data.data() + pos + 4);
    r.header_.header_bytes = pos + 12;
    return r;
}

result<std::optional<hprof_record>> hprof_reader::cursor::next() {
    auto data = reader_->data_;
    if (pos_ >= data.size()) return std::optional<hprof_record>{};
    if (data.size() - pos_ < 9)
        return fail(error_code::out_of_bounds, "record header is cut short by the end of the file", pos_);
    const std::byte* p = data.data() + pos_;
    hprof_record rec;
    rec.tag = be::u1(p);
    rec.time_delta = be::u4(p + 1);
    std::uint32_t length = be::u4(p + 5);
    rec.offset = pos_;
    rec.body_offset = pos_ + 9;
    std::uint64_t available = data.size() - rec.body_offset;
    if (length > available) {
        rec.truncated = true;
        rec.body = data.subspan(rec.body_offset, available);
        pos_ = data.size();
    } else {
        rec.body = data.subspan(rec.body_offset, length);
        pos_ = rec.body_offset + length;
    }
    return std::optional<hprof_record>(rec);
}

}  // namespace hprof
}  // namespace heapd
