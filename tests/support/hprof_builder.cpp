#include "support/hprof_builder.h"

#include "base/fd_io.h"
#include "formats/hprof/basic_type.h"

#include <algorithm>
#include <cassert>
#include <fstream>

namespace heapd::test {

void put_u1(byte_vector& out, std::uint8_t v) { out.push_back(static_cast<std::byte>(v)); }

void put_u2(byte_vector& out, std::uint16_t v) {
    put_u1(out, static_cast<std::uint8_t>(v >> 8));
    put_u1(out, static_cast<std::uint8_t>(v));
}

void put_u4(byte_vector& out, std::uint32_t v) {
    put_u2(out, static_cast<std::uint16_t>(v >> 16));
    put_u2(out, static_cast<std::uint16_t>(v));
}

void put_u8(byte_vector& out, std::uint64_t v) {
    put_u4(out, static_cast<std::uint32_t>(v >> 32));
    put_u4(out, static_cast<std::uint32_t>(v));
}

void put_id(byte_vector& out, std::uint64_t v, unsigned id_size) {
    if (id_size == 8)
        put_u8(out, v);
    else
        put_u4(out, static_cast<std::uint32_t>(v));
}

void put_bytes(byte_vector& out, std::span<const std::byte> bytes) {
    out.insert(out.end(), bytes.begin(), bytes.end());
}

void put_text(byte_vector& out, std::string_view text) {
    for (char c : text) put_u1(out, static_cast<std::uint8_t>(c));
}

hprof_builder::hprof_builder(unsigned id_size, std::string_view format, std::uint64_t timestamp_ms)
    : id_size_(id_size) {
    put_text(out_, format);
    put_u1(out_, 0);
    put_u4(out_, id_size);
    put_u8(out_, timestamp_ms);
}

bool hprof_builder::write_to(const std::string& path) const {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) return false;
    f.write(reinterpret_cast<const char*>(out_.data()), static_cast<std::streamsize>(out_.size()));
    return static_cast<bool>(f);
}

bool hprof_builder::flush_to(int fd) {
    assert(segment_length_at_ == 0 && "a heap dump segment is still open");
    if (!write_all(fd, out_.data(), out_.size())) return false;
    flushed_ += out_.size();
    out_.clear();
    return true;
}

void hprof_builder::record_header(std::uint8_t tag, std::uint32_t length) {
    assert(segment_length_at_ == 0 && "a heap dump segment is still open");
    put_u1(out_, tag);
    put_u4(out_, time_delta_);
    put_u4(out_, length);
}

hprof_builder& hprof_builder::raw_record(std::uint8_t tag, std::span<const std::byte> body) {
    return raw_record(tag, static_cast<std::uint32_t>(body.size()), body);
}

hprof_builder& hprof_builder::raw_record(std::uint8_t tag, std::uint32_t length, std::span<const std::byte> body) {
    record_header(tag, length);
    put_bytes(out_, body);
    return *this;
}

hprof_builder& hprof_builder::utf8(std::uint64_t id, std::string_view text) {
    byte_vector body;
    test::put_id(body, id, id_size_);
    put_text(body, text);
    return raw_record(0x01, body);
}

hprof_builder& hprof_builder::load_class(std::uint32_t serial, std::uint64_t class_id, std::uint32_t trace_serial,
                                         std::uint64_t name_id) {
    byte_vector body;
    put_u4(body, serial);
    test::put_id(body, class_id, id_size_);
    put_u4(body, trace_serial);
    test::put_id(body, name_id, id_size_);
    return raw_record(0x02, body);
}

hprof_builder& hprof_builder::unload_class(std::uint32_t serial) {
    byte_vector body;
    put_u4(body, serial);
    return raw_record(0x03, body);
}

hprof_builder& hprof_builder::frame(std::uint64_t frame_id, std::uint64_t method_name_id, std::uint64_t signature_id,
                                    std::uint64_t source_file_id, std::uint32_t class_serial, std::int32_t line) {
    byte_vector body;
    for (std::uint64_t id : {frame_id, method_name_id, signature_id, source_file_id}) test::put_id(body, id, id_size_);
    put_u4(body, class_serial);
    put_u4(body, static_cast<std::uint32_t>(line));
    return raw_record(0x04, body);
}

hprof_builder& hprof_builder::trace(std::uint32_t serial, std::uint32_t thread_serial,
                                    std::initializer_list<std::uint64_t> frame_ids) {
    return trace(serial, thread_serial, std::span<const std::uint64_t>(frame_ids.begin(), frame_ids.size()));
}

hprof_builder& hprof_builder::trace(std::uint32_t serial, std::uint32_t thread_serial,
                                    std::span<const std::uint64_t> frame_ids) {
    byte_vector body;
    put_u4(body, serial);
    put_u4(body, thread_serial);
    put_u4(body, static_cast<std::uint32_t>(frame_ids.size()));
    for (std::uint64_t id : frame_ids) test::put_id(body, id, id_size_);
    return raw_record(0x05, body);
}

hprof_builder& hprof_builder::start_thread(std::uint32_t serial, std::uint64_t object_id, std::uint32_t trace_serial,
                                           std::uint64_t name_id, std::uint64_t group_name_id,
                                           std::uint64_t parent_group_name_id) {
    byte_vector body;
    put_u4(body, serial);
    test::put_id(body, object_id, id_size_);
    put_u4(body, trace_serial);
    for (std::uint64_t id : {name_id, group_name_id, parent_group_name_id}) test::put_id(body, id, id_size_);
    return raw_record(0x0A, body);
}

hprof_builder& hprof_builder::end_thread(std::uint32_t serial) {
    byte_vector body;
    put_u4(body, serial);
    return raw_record(0x0B, body);
}

hprof_builder& hprof_builder::heap_summary(std::uint32_t live_bytes, std::uint32_t live_instances,
                                           std::uint64_t allocated_bytes, std::uint64_t allocated_instances) {
    byte_vector body;
    put_u4(body, live_bytes);
    put_u4(body, live_instances);
    put_u8(body, allocated_bytes);
    put_u8(body, allocated_instances);
    return raw_record(0x07, body);
}

hprof_builder& hprof_builder::cpu_samples(std::uint32_t total,
                                          std::initializer_list<std::pair<std::uint32_t, std::uint32_t>> traces) {
    byte_vector body;
    put_u4(body, total);
    put_u4(body, static_cast<std::uint32_t>(traces.size()));
    for (auto [samples, serial] : traces) {
        put_u4(body, samples);
        put_u4(body, serial);
    }
    return raw_record(0x0D, body);
}

hprof_builder& hprof_builder::control_settings(std::uint32_t flags, std::uint16_t depth) {
    byte_vector body;
    put_u4(body, flags);
    put_u2(body, depth);
    return raw_record(0x0E, body);
}

hprof_builder& hprof_builder::begin_segment(std::uint8_t tag) {
    record_header(tag, 0);
    segment_length_at_ = out_.size() - 4;
    return *this;
}

hprof_builder& hprof_builder::end_segment() {
    assert(segment_length_at_ != 0 && "no heap dump segment is open");
    const std::size_t length = out_.size() - (segment_length_at_ + 4);
    byte_vector len;
    put_u4(len, static_cast<std::uint32_t>(length));
    std::copy(len.begin(), len.end(), out_.begin() + static_cast<std::ptrdiff_t>(segment_length_at_));
    segment_length_at_ = 0;
    return *this;
}

hprof_builder& hprof_builder::root_id_only(std::uint8_t tag, std::uint64_t id) {
    put_u1(out_, tag);
    put_id(id);
    return *this;
}

hprof_builder& hprof_builder::root_jni_global(std::uint64_t id, std::uint64_t ref_id) {
    put_u1(out_, 0x01);
    put_id(id);
    put_id(ref_id);
    return *this;
}

hprof_builder& hprof_builder::root_thread(std::uint8_t tag, std::uint64_t id, std::uint32_t thread_serial) {
    put_u1(out_, tag);
    put_id(id);
    put_u4(out_, thread_serial);
    return *this;
}

hprof_builder& hprof_builder::root_thread_frame(std::uint8_t tag, std::uint64_t id, std::uint32_t thread_serial,
                                                std::uint32_t third) {
    root_thread(tag, id, thread_serial);
    put_u4(out_, third);
    return *this;
}

hprof_builder& hprof_builder::class_dump(const class_spec& s) {
    put_u1(out_, 0x20);
    put_id(s.class_id);
    put_u4(out_, s.trace_serial);
    put_id(s.super_id);
    put_id(s.loader_id);
    put_id(s.signers_id);
    put_id(s.protection_domain_id);
    put_id(0);  // reserved
    put_id(0);  // reserved
    put_u4(out_, s.instance_size);
    put_u2(out_, static_cast<std::uint16_t>(s.constants.size()));
    for (const constant_decl& c : s.constants) {
        put_u2(out_, c.index);
        put_u1(out_, c.type);
        put_bytes(out_, c.value);
    }
    put_u2(out_, static_cast<std::uint16_t>(s.statics.size()));
    for (const static_decl& f : s.statics) {
        put_id(f.name_id);
        put_u1(out_, f.type);
        put_bytes(out_, f.value);
    }
    put_u2(out_, static_cast<std::uint16_t>(s.fields.size()));
    for (const field_decl& f : s.fields) {
        put_id(f.name_id);
        put_u1(out_, f.type);
    }
    return *this;
}

hprof_builder& hprof_builder::class_dump(std::uint64_t class_id, std::uint64_t super_id, std::vector<field_decl> fields,
                                         std::vector<static_decl> statics, std::uint32_t instance_size) {
    class_spec s;
    s.class_id = class_id;
    s.super_id = super_id;
    s.fields = std::move(fields);
    s.statics = std::move(statics);
    s.instance_size = instance_size;
    return class_dump(s);
}

hprof_builder& hprof_builder::instance(std::uint64_t id, std::uint64_t class_id, std::span<const std::byte> field_bytes,
                                       std::uint32_t trace_serial) {
    put_u1(out_, 0x21);
    put_id(id);
    put_u4(out_, trace_serial);
    put_id(class_id);
    put_u4(out_, static_cast<std::uint32_t>(field_bytes.size()));
    put_bytes(out_, field_bytes);
    return *this;
}

hprof_builder& hprof_builder::object_array(std::uint64_t id, std::uint64_t class_id,
                                           std::span<const std::uint64_t> elements, std::uint32_t trace_serial) {
    put_u1(out_, 0x22);
    put_id(id);
    put_u4(out_, trace_serial);
    put_u4(out_, static_cast<std::uint32_t>(elements.size()));
    put_id(class_id);
    for (std::uint64_t e : elements) put_id(e);
    return *this;
}

hprof_builder& hprof_builder::primitive_array(std::uint64_t id, std::uint8_t type, std::uint32_t length,
                                              std::span<const std::byte> data, std::uint32_t trace_serial) {
    put_u1(out_, 0x23);
    put_id(id);
    put_u4(out_, trace_serial);
    put_u4(out_, length);
    put_u1(out_, type);
    put_bytes(out_, data);
    return *this;
}

hprof_builder& hprof_builder::primitive_array(std::uint64_t id, std::uint8_t type, std::uint32_t length) {
    byte_vector zeros(std::size_t{length} * value_size(type, id_size_));
    return primitive_array(id, type, length, zeros);
}

hprof_builder& hprof_builder::primitive_array_nodata(std::uint64_t id, std::uint8_t type, std::uint32_t length,
                                                     std::uint32_t trace_serial) {
    put_u1(out_, 0xC3);
    put_id(id);
    put_u4(out_, trace_serial);
    put_u4(out_, length);
    put_u1(out_, type);
    return *this;
}

hprof_builder& hprof_builder::heap_dump_info(std::uint32_t heap_type, std::uint64_t name_id) {
    put_u1(out_, 0xFE);
    put_u4(out_, heap_type);
    put_id(name_id);
    return *this;
}

hprof_builder& hprof_builder::raw_subrecord(std::span<const std::byte> bytes) {
    put_bytes(out_, bytes);
    return *this;
}

}  // namespace heapd::test
