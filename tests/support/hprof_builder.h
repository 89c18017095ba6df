#pragma once
// Writes synthetic HPROF files for tests: header, top-level records and heap dump segments.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace heapd::test {

using byte_vector = std::vector<std::byte>;

// Big-endian writers appending to a raw byte vector.
void put_u1(byte_vector& out, std::uint8_t v);
void put_u2(byte_vector& out, std::uint16_t v);
void put_u4(byte_vector& out, std::uint32_t v);
void put_u8(byte_vector& out, std::uint64_t v);
void put_id(byte_vector& out, std::uint64_t v, unsigned id_size);
void put_bytes(byte_vector& out, std::span<const std::byte> bytes);
void put_text(byte_vector& out, std::string_view text);

// Builds field or array values fluently: values(8).id(0x10).i4(7).bytes().
class values {
public:
    explicit values(unsigned id_size = 8) : id_size_(id_size) {}
    values& u1(std::uint8_t v) {
        put_u1(out_, v);
        return *this;
    }
    values& u2(std::uint16_t v) {
        put_u2(out_, v);
        return *this;
    }
    values& u4(std::uint32_t v) {
        put_u4(out_, v);
        return *this;
    }
    values& u8(std::uint64_t v) {
        put_u8(out_, v);
        return *this;
    }
    values& id(std::uint64_t v) {
        put_id(out_, v, id_size_);
        return *this;
    }
    const byte_vector& bytes() const { return out_; }
    operator byte_vector() const { return out_; }

private:
    unsigned id_size_;
    byte_vector out_;
};

// An instance field declared by a CLASS_DUMP: name string id and basic type.
struct field_decl {
    std::uint64_t name_id;
    std::uint8_t type;
};

// A static field of a CLASS_DUMP: name string id, basic type and its value's bytes.
struct static_decl {
    std::uint64_t name_id;
    std::uint8_t type;
    byte_vector value;
};

// A constant pool entry of a CLASS_DUMP (HotSpot writes none; the format allows them).
struct constant_decl {
    std::uint16_t index;
    std::uint8_t type;
    byte_vector value;
};

// Everything a CLASS_DUMP sub-record holds.
struct class_spec {
    std::uint64_t class_id = 0;
    std::uint32_t trace_serial = 0;
    std::uint64_t super_id = 0;
    std::uint64_t loader_id = 0;
    std::uint64_t signers_id = 0;
    std::uint64_t protection_domain_id = 0;
    std::uint32_t instance_size = 0;
    std::vector<constant_decl> constants;
    std::vector<static_decl> statics;
    std::vector<field_decl> fields;
};

// Appends an HPROF header and records to a byte vector; every writer returns *this for chaining.
class hprof_builder {
public:
    explicit hprof_builder(unsigned id_size = 8, std::string_view format = "JAVA PROFILE 1.0.2",
                           std::uint64_t timestamp_ms = 0);

    unsigned id_size() const { return id_size_; }
    // The bytes built since the last flush_to (all of them when it was never called).
    const byte_vector& bytes() const { return out_; }
    std::span<const std::byte> span() const { return out_; }
    // Bytes written so far, flushed ones included: the file offset the next write lands at.
    std::uint64_t size() const { return flushed_ + out_.size(); }
    // Cuts the output to its first n bytes (to make truncated files).
    void truncate(std::size_t n) { out_.resize(n); }
    // Writes the bytes to a file; false when it cannot.
    bool write_to(const std::string& path) const;
    // Appends the bytes built so far to fd and forgets them, so that files of any size can be
    // written with a bounded buffer; no heap dump segment may be open. False on a write error.
    bool flush_to(int fd);
    // Keeps room for n bytes in the buffer (no reallocation while it fills up to that).
    void reserve(std::size_t n) { out_.reserve(n); }

    // Top-level records. time_delta is written as 0 unless set_time_delta() changed it.
    hprof_builder& set_time_delta(std::uint32_t delta) {
        time_delta_ = delta;
        return *this;
    }
    hprof_builder& raw_record(std::uint8_t tag, std::span<const std::byte> body);
    // A record header declaring length bytes followed by body (which may be shorter or longer).
    hprof_builder& raw_record(std::uint8_t tag, std::uint32_t length, std::span<const std::byte> body);
    hprof_builder& utf8(std::uint64_t id, std::string_view text);
    hprof_builder& load_class(std::uint32_t serial, std::uint64_t class_id, std::uint32_t trace_serial,
                              std::uint64_t name_id);
    hprof_builder& unload_class(std::uint32_t serial);
    hprof_builder& frame(std::uint64_t frame_id, std::uint64_t method_name_id, std::uint64_t signature_id,
                         std::uint64_t source_file_id, std::uint32_t class_serial, std::int32_t line);
    hprof_builder& trace(std::uint32_t serial, std::uint32_t thread_serial,
                         std::initializer_list<std::uint64_t> frame_ids);
    hprof_builder& trace(std::uint32_t serial, std::uint32_t thread_serial, std::span<const std::uint64_t> frame_ids);
    hprof_builder& start_thread(std::uint32_t serial, std::uint64_t object_id, std::uint32_t trace_serial,
                                std::uint64_t name_id, std::uint64_t group_name_id, std::uint64_t parent_group_name_id);
    hprof_builder& end_thread(std::uint32_t serial);
    hprof_builder& alloc_sites(std::span<const std::byte> body) { return raw_record(0x06, body); }
    hprof_builder& heap_summary(std::uint32_t live_bytes, std::uint32_t live_instances, std::uint64_t allocated_bytes,
                                std::uint64_t allocated_instances);
    // CPU_SAMPLES: total, then (samples, trace serial) pairs.
    hprof_builder& cpu_samples(std::uint32_t total,
                               std::initializer_list<std::pair<std::uint32_t, std::uint32_t>> traces);
    hprof_builder& control_settings(std::uint32_t flags, std::uint16_t depth);
    hprof_builder& heap_dump_end() { return raw_record(0x2C, {}); }

    // Heap dump segments: begin_segment writes a record header, end_segment patches its length.
    hprof_builder& begin_segment(std::uint8_t tag = 0x1C);
    hprof_builder& end_segment();

    // GC roots, one writer per sub-record kind (Android's kinds included).
    hprof_builder& root_unknown(std::uint64_t id) { return root_id_only(0xFF, id); }
    hprof_builder& root_jni_global(std::uint64_t id, std::uint64_t ref_id);
    hprof_builder& root_jni_local(std::uint64_t id, std::uint32_t thread_serial, std::uint32_t frame) {
        return root_thread_frame(0x02, id, thread_serial, frame);
    }
    hprof_builder& root_java_frame(std::uint64_t id, std::uint32_t thread_serial, std::uint32_t frame) {
        return root_thread_frame(0x03, id, thread_serial, frame);
    }
    hprof_builder& root_native_stack(std::uint64_t id, std::uint32_t thread_serial) {
        return root_thread(0x04, id, thread_serial);
    }
    hprof_builder& root_sticky_class(std::uint64_t id) { return root_id_only(0x05, id); }
    hprof_builder& root_thread_block(std::uint64_t id, std::uint32_t thread_serial) {
        return root_thread(0x06, id, thread_serial);
    }
    hprof_builder& root_monitor_used(std::uint64_t id) { return root_id_only(0x07, id); }
    hprof_builder& root_thread_object(std::uint64_t id, std::uint32_t thread_serial, std::uint32_t trace_serial) {
        return root_thread_frame(0x08, id, thread_serial, trace_serial);
    }
    hprof_builder& root_interned_string(std::uint64_t id) { return root_id_only(0x89, id); }
    hprof_builder& root_finalizing(std::uint64_t id) { return root_id_only(0x8A, id); }
    hprof_builder& root_debugger(std::uint64_t id) { return root_id_only(0x8B, id); }
    hprof_builder& root_reference_cleanup(std::uint64_t id) { return root_id_only(0x8C, id); }
    hprof_builder& root_vm_internal(std::uint64_t id) { return root_id_only(0x8D, id); }
    hprof_builder& root_jni_monitor(std::uint64_t id, std::uint32_t thread_serial, std::uint32_t frame) {
        return root_thread_frame(0x8E, id, thread_serial, frame);
    }
    hprof_builder& root_unreachable(std::uint64_t id) { return root_id_only(0x90, id); }

    // Objects.
    hprof_builder& class_dump(const class_spec& spec);
    hprof_builder& class_dump(std::uint64_t class_id, std::uint64_t super_id, std::vector<field_decl> fields,
                              std::vector<static_decl> statics = {}, std::uint32_t instance_size = 0);
    hprof_builder& instance(std::uint64_t id, std::uint64_t class_id, std::span<const std::byte> field_bytes,
                            std::uint32_t trace_serial = 0);
    hprof_builder& object_array(std::uint64_t id, std::uint64_t class_id, std::span<const std::uint64_t> elements,
                                std::uint32_t trace_serial = 0);
    hprof_builder& object_array(std::uint64_t id, std::uint64_t class_id, std::initializer_list<std::uint64_t> elements,
                                std::uint32_t trace_serial = 0) {
        return object_array(id, class_id, std::span<const std::uint64_t>(elements.begin(), elements.size()),
                            trace_serial);
    }
    // PRIM_ARRAY_DUMP with the given element bytes (length × element size of type, not checked).
    hprof_builder& primitive_array(std::uint64_t id, std::uint8_t type, std::uint32_t length,
                                   std::span<const std::byte> data, std::uint32_t trace_serial = 0);
    // PRIM_ARRAY_DUMP of length zero-filled elements.
    hprof_builder& primitive_array(std::uint64_t id, std::uint8_t type, std::uint32_t length);
    hprof_builder& primitive_array_nodata(std::uint64_t id, std::uint8_t type, std::uint32_t length,
                                          std::uint32_t trace_serial = 0);
    hprof_builder& heap_dump_info(std::uint32_t heap_type, std::uint64_t name_id);
    // Arbitrary bytes inside the open segment (unknown tags, damaged sub-records).
    hprof_builder& raw_subrecord(std::span<const std::byte> bytes);

private:
    void record_header(std::uint8_t tag, std::uint32_t length);
    hprof_builder& root_id_only(std::uint8_t tag, std::uint64_t id);
    hprof_builder& root_thread(std::uint8_t tag, std::uint64_t id, std::uint32_t thread_serial);
    hprof_builder& root_thread_frame(std::uint8_t tag, std::uint64_t id, std::uint32_t thread_serial,
                                     std::uint32_t third);
    void put_id(std::uint64_t v) { test::put_id(out_, v, id_size_); }

    unsigned id_size_;
    std::uint32_t time_delta_ = 0;
    byte_vector out_;
    std::uint64_t flushed_ = 0;          // bytes given to flush_to
    std::size_t segment_length_at_ = 0;  // offset of the open segment's length field, 0 when none
};

}  // namespace heapd::test
