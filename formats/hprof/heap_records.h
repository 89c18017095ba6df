#pragma once
// Views of heap-dump sub-records (GC roots, classes, instances, arrays) and the walker over a segment.
#include <cstdint>
#include <span>

#include "base/error.h"
#include "formats/hprof/basic_type.h"
#include "formats/hprof/big_endian.h"

namespace heapd {
inline namespace hprof {

// Sub-record tags inside HEAP_DUMP and HEAP_DUMP_SEGMENT, including Android's additions.
enum class heap_tag : std::uint8_t {
    root_unknown = 0xFF,
    root_jni_global = 0x01,
    root_jni_local = 0x02,
    root_java_frame = 0x03,
    root_native_stack = 0x04,
    root_sticky_class = 0x05,
    root_thread_block = 0x06,
    root_monitor_used = 0x07,
    root_thread_object = 0x08,
    class_dump = 0x20,
    instance_dump = 0x21,
    object_array_dump = 0x22,
    primitive_array_dump = 0x23,
    root_interned_string = 0x89,    // Android
    root_finalizing = 0x8A,         // Android
    root_debugger = 0x8B,           // Android
    root_reference_cleanup = 0x8C,  // Android
    root_vm_internal = 0x8D,        // Android
    root_jni_monitor = 0x8E,        // Android
    root_unreachable = 0x90,        // Android
    primitive_array_nodata = 0xC3,  // Android
    heap_dump_info = 0xFE,          // Android
};

// The sub-record's documented name, or nullptr for an unknown tag.
const char* heap_tag_name(std::uint8_t tag);

// GC root kinds, dense, for counting; root_kind_count is their number.
enum class root_kind : std::uint8_t {
    unknown,
    jni_global,
    jni_local,
    java_frame,
    native_stack,
    sticky_class,
    thread_block,
    monitor_used,
    thread_object,
    interned_string,
    finalizing,
    debugger,
    reference_cleanup,
    vm_internal,
    jni_monitor,
    unreachable,
};
inline constexpr unsigned root_kind_count = 16;
const char* root_kind_name(root_kind k);

// A GC root: its kind, the object it roots, and the thread and frame where the kind has them.
struct root_view {
    root_kind kind;
    std::uint64_t object_id;
    std::uint64_t offset;
    std::uint32_t thread_serial = 0;  // thread_object, java_frame, jni_local, native_stack, thread_block
    std::uint32_t trace_serial = 0;   // thread_object: the thread's stack trace
    std::uint32_t frame_index = 0;    // java_frame, jni_local: depth in the stack, -1 unknown
};

// A CLASS_DUMP record; statics and instance fields are decoded on access.
struct class_dump_view {
    std::span<const std::byte> rec;  // the whole sub-record, tag included
    std::uint64_t offset;
    unsigned id_size;
    std::uint32_t statics_at;  // offset in rec of the statics count
    std::uint32_t fields_at;   // offset in rec of the instance field count

    std::uint64_t class_id() const { return be::id(rec.data() + 1, id_size); }
    std::uint64_t super_id() const { return be::id(rec.data() + 5 + id_size, id_size); }
    std::uint64_t loader_id() const { return be::id(rec.data() + 5 + 2 * id_size, id_size); }
    std::uint64_t signers_id() const { return be::id(rec.data() + 5 + 3 * id_size, id_size); }
    std::uint64_t protection_domain_id() const { return be::id(rec.data() + 5 + 4 * id_size, id_size); }
    std::uint32_t instance_size() const { return be::u4(rec.data() + 5 + 7 * id_size); }
    std::uint16_t static_count() const { return be::u2(rec.data() + statics_at); }
    std::uint16_t field_count() const { return be::u2(rec.data() + fields_at); }

    // One static field: name string id, type and a view of its value.
    struct static_field {
        std::uint64_t name_id;
        std::uint8_t type;
        std::span<const std::byte> value;
    };
    // One instance field declared by this class: name string id and type.
    struct field {
        std::uint64_t name_id;
        std::uint8_t type;
    };
    // Calls f(static_field) for each static, in dump order.
    template <class F>
    void for_each_static(F&& f) const;
    // Calls f(field) for each declared instance field, in dump order.
    template <class F>
    void for_each_field(F&& f) const;
};

// An INSTANCE_DUMP record; data holds field values, this class first, then its supers.
struct instance_view {
    std::uint64_t id;
    std::uint64_t class_id;
    std::uint64_t offset;
    std::uint32_t trace_serial;
    std::span<const std::byte> data;
};

// An OBJ_ARRAY_DUMP record; element(i) decodes the i-th reference.
struct object_array_view {
    std::uint64_t id;
    std::uint64_t class_id;
    std::uint64_t offset;
    std::uint32_t trace_serial;
    std::uint32_t length;
    unsigned id_size;
    std::span<const std::byte> elements;
    std::uint64_t element(std::uint32_t i) const { return be::id(elements.data() + std::size_t{i} * id_size, id_size); }
};

// A PRIM_ARRAY_DUMP (or Android's no-data variant, with empty data).
struct primitive_array_view {
    std::uint64_t id;
    std::uint64_t offset;
    std::uint32_t trace_serial;
    std::uint32_t length;
    std::uint8_t type;
    std::span<const std::byte> data;  // empty for PRIMITIVE_ARRAY_NODATA
};

// Android's HEAP_DUMP_INFO: which heap (app, image, zygote) the following records belong to.
struct heap_info_view {
    std::uint32_t heap_type;
    std::uint64_t name_id;
    std::uint64_t offset;
};

// Base for walker visitors: override (by hiding) only what you need; all default to nothing.
struct heap_visitor {
    void root(const root_view&) {}
    void class_dump(const class_dump_view&) {}
    void instance(const instance_view&) {}
    void object_array(const object_array_view&) {}
    void primitive_array(const primitive_array_view&) {}
    void heap_info(const heap_info_view&) {}
};

// Where a walk stopped early and why; the offset of the sub-record that did not fit or parse.
result<void> heap_walk_error(std::uint8_t tag, std::uint64_t offset, bool overrun);

template <class F>
void class_dump_view::for_each_static(F&& f) const {
    const std::byte* p = rec.data() + statics_at;
    unsigned n = be::u2(p);
    p += 2;
    for (unsigned i = 0; i < n; ++i) {
        std::uint64_t name = be::id(p, id_size);
        std::uint8_t type = be::u1(p + id_size);
        unsigned vs = value_size(type, id_size);
        f(static_field{name, type, {p + id_size + 1, vs}});
        p += id_size + 1 + vs;
    }
}

template <class F>
void class_dump_view::for_each_field(F&& f) const {
    const std::byte* p = rec.data() + fields_at;
    unsigned n = be::u2(p);
    p += 2;
    for (unsigned i = 0; i < n; ++i) {
        f(field{be::id(p, id_size), be::u1(p + id_size)});
        p += id_size + 1;
    }
}

}  // namespace hprof
}  // namespace heapd

#include "formats/hprof/heap_walk.inl"
