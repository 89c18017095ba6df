// The heap sub-record walker, included from heap_records.h: a template so visitors inline.
#pragma once

namespace heapd {
inline namespace hprof {

// Walks the sub-records of one HEAP_DUMP or HEAP_DUMP_SEGMENT body, calling the visitor for each;
// a visitor with a done() member stops the walk when done() turns true.
// Every read is bounded by the body; the first sub-record that does not fit or parse stops the walk
// with an error naming its offset (code out_of_bounds when it ran past the body's end).
// The walk for one identifier size, a compile-time constant so header sizes fold.
template <unsigned id, class V>
result<void> walk_heap_body_for(std::span<const std::byte> body, std::uint64_t body_offset, V& v) {
    const std::byte* base = body.data();
    const std::size_t size = body.size();
    std::size_t pos = 0;
    while (pos < size) {
        const std::byte* p = base + pos;
        const std::size_t left = size - pos;
        const std::uint8_t tag = be::u1(p);
        const std::uint64_t at = body_offset + pos;
        auto overrun = [&] { return heap_walk_error(tag, at, true); };
        switch (tag) {
        case 0x21: {  // INSTANCE_DUMP
            const std::size_t head = 1 + 2 * id + 8;
            if (left < head) return overrun();
            std::uint32_t len = be::u4(p + head - 4);
            if (left - head < len) return overrun();
            v.instance(
                instance_view{be::id(p + 1, id), be::id(p + 5 + id, id), at, be::u4(p + 1 + id), {p + head, len}});
            pos += head + len;
            break;
        }
        case 0x22: {  // OBJ_ARRAY_DUMP
            const std::size_t head = 1 + 2 * id + 8;
            if (left < head) return overrun();
            std::uint32_t n = be::u4(p + 5 + id);
            std::uint64_t bytes = std::uint64_t{n} * id;
            if (left - head < bytes) return overrun();
            v.object_array(object_array_view{
                be::id(p + 1, id), be::id(p + 9 + id, id), at, be::u4(p + 1 + id), n, id, {p + head, bytes}});
            pos += head + bytes;
            break;
        }
        case 0x23:    // PRIM_ARRAY_DUMP
        case 0xC3: {  // PRIMITIVE_ARRAY_NODATA (Android)
            const std::size_t head = 1 + id + 9;
            if (left < head) return overrun();
            std::uint32_t n = be::u4(p + 5 + id);
            std::uint8_t type = be::u1(p + 9 + id);
            if (!is_primitive(type)) return heap_walk_error(tag, at, false);
            std::uint64_t bytes = tag == 0x23 ? std::uint64_t{n} * value_size(type, id) : 0;
            if (left - head < bytes) return overrun();
            v.primitive_array(
                primitive_array_view{be::id(p + 1, id), at, be::u4(p + 1 + id), n, type, {p + head, bytes}});
            pos += head + bytes;
            break;
        }
        case 0x20: {  // CLASS_DUMP
            std::size_t q = 1 + 7 * id + 8;
            if (left < q + 2) return overrun();
            unsigned cp = be::u2(p + q);
            q += 2;
            for (unsigned i = 0; i < cp; ++i) {
                if (left < q + 3) return overrun();
                unsigned vs = value_size(be::u1(p + q + 2), id);
                if (vs == 0) return heap_walk_error(tag, at, false);
                q += 3 + vs;
            }
            if (left < q + 2) return overrun();
            std::size_t statics_at = q;
            unsigned ns = be::u2(p + q);
            q += 2;
            for (unsigned i = 0; i < ns; ++i) {
                if (left < q + id + 1) return overrun();
                unsigned vs = value_size(be::u1(p + q + id), id);
                if (vs == 0) return heap_walk_error(tag, at, false);
                q += id + 1 + vs;
            }
            if (left < q + 2) return overrun();
            std::size_t fields_at = q;
            unsigned nf = be::u2(p + q);
            q += 2;
            if (left < q + std::size_t{nf} * (id + 1)) return overrun();
            for (unsigned i = 0; i < nf; ++i)
                if (value_size(be::u1(p + q + i * (id + 1) + id), id) == 0) return heap_walk_error(tag, at, false);
            q += std::size_t{nf} * (id + 1);
            v.class_dump(class_dump_view{
                {p, q}, at, id, static_cast<std::uint32_t>(statics_at), static_cast<std::uint32_t>(fields_at)});
            pos += q;
            break;
        }
        case 0xFF:
        case 0x05:
        case 0x07:
        case 0x89:
        case 0x8A:
        case 0x8B:
        case 0x8C:
        case 0x8D:
        case 0x90: {  // roots with an object id only
            if (left < 1 + id) return overrun();
            root_kind k = tag == 0xFF   ? root_kind::unknown
                          : tag == 0x05 ? root_kind::sticky_class
                          : tag == 0x07 ? root_kind::monitor_used
                          : tag == 0x89 ? root_kind::interned_string
                          : tag == 0x8A ? root_kind::finalizing
                          : tag == 0x8B ? root_kind::debugger
                          : tag == 0x8C ? root_kind::reference_cleanup
                          : tag == 0x8D ? root_kind::vm_internal
                                        : root_kind::unreachable;
            v.root(root_view{k, be::id(p + 1, id), at});
            pos += 1 + id;
            break;
        }
        case 0x01: {  // JNI global: object, global reference id
            if (left < 1 + 2 * id) return overrun();
            v.root(root_view{root_kind::jni_global, be::id(p + 1, id), at});
            pos += 1 + 2 * id;
            break;
        }
        case 0x02:
        case 0x03:
        case 0x08:
        case 0x8E: {  // object, thread serial, frame or trace
            if (left < 9 + id) return overrun();
            root_view r{tag == 0x02   ? root_kind::jni_local
                        : tag == 0x03 ? root_kind::java_frame
                        : tag == 0x08 ? root_kind::thread_object
                                      : root_kind::jni_monitor,
                        be::id(p + 1, id), at, be::u4(p + 1 + id)};
            if (tag == 0x08)
                r.trace_serial = be::u4(p + 5 + id);
            else
                r.frame_index = be::u4(p + 5 + id);
            v.root(r);
            pos += 9 + id;
            break;
        }
        case 0x04:
        case 0x06: {  // native stack, thread block: object, thread serial
            if (left < 5 + id) return overrun();
            v.root(root_view{tag == 0x04 ? root_kind::native_stack : root_kind::thread_block, be::id(p + 1, id), at,
                             be::u4(p + 1 + id)});
            pos += 5 + id;
            break;
        }
        case 0xFE: {  // HEAP_DUMP_INFO (Android): heap type, heap name string id
            if (left < 5 + id) return overrun();
            v.heap_info(heap_info_view{be::u4(p + 1), be::id(p + 5, id), at});
            pos += 5 + id;
            break;
        }
        default: return heap_walk_error(tag, at, false);
        }
        if constexpr (requires { v.done(); }) {
            if (v.done()) return {};
        }
    }
    return {};
}

template <class V>
result<void> walk_heap_body(std::span<const std::byte> body, std::uint64_t body_offset, unsigned id_size, V& v) {
    return id_size == 8 ? walk_heap_body_for<8>(body, body_offset, v) : walk_heap_body_for<4>(body, body_offset, v);
}

}  // namespace hprof
}  // namespace heapd
