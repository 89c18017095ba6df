#include "support/shaped_heap.h"

#include "formats/hprof/heap_walk.h"
#include "formats/hprof/hprof_reader.h"

namespace heapd::test {
namespace {

graph_options graph_options_of(bool instances_reference_their_class) {
    graph_options o;
    o.instances_reference_their_class = instances_reference_their_class;
    return o;
}

}  // namespace

analyzed::analyzed(const hprof_builder& b, bool instances_reference_their_class)
    : idx(record_index::build(*hprof_reader::parse(b.span()))),
      classes(idx),
      census(run_census()),
      graph(*object_graph::build(idx, classes, census, graph_options_of(instances_reference_their_class))),
      dom(dominator_tree::compute(graph)) {}

census_result analyzed::run_census() {
    heap_census c(idx, classes, 0);
    walk_heap(idx, c);
    return c.finish();
}

shaped_heap::shaped_heap(unsigned session_count, unsigned payload_bytes, unsigned chain, unsigned blob_count,
                         unsigned blob_bytes) {
    constexpr std::uint8_t t_object = 2, t_int = 10, t_long = 11, t_byte = 8;
    const std::pair<std::uint64_t, const char*> names[] = {{object_class, "java/lang/Object"},
                                                           {list_class, "java/util/ArrayList"},
                                                           {holder_class, "Holder"},
                                                           {session_class, "Holder$Session"},
                                                           {node_class, "Holder$Node"},
                                                           {blob_class, "Blob"},
                                                           {array_class, "[Ljava/lang/Object;"},
                                                           {base_class, "Base"},
                                                           {derived_class, "Derived"},
                                                           {reference_class, "java/lang/ref/Reference"},
                                                           {weak_class, "java/lang/ref/WeakReference"}};
    std::uint32_t serial = 1;
    for (auto [id, name] : names) {
        b.utf8(0x900 + serial, name).load_class(serial, id, 0, 0x900 + serial);
        ++serial;
    }
    enum : std::uint64_t {
        n_size = 0x801,
        n_elements,
        n_leak,
        n_chain,
        n_user,
        n_payload,
        n_next,
        n_value,
        n_data,
        n_owner,
        n_extra,
        n_referent
    };
    b.utf8(n_size, "size").utf8(n_elements, "elementData").utf8(n_leak, "LEAK").utf8(n_chain, "CHAIN");
    b.utf8(n_user, "user").utf8(n_payload, "payload").utf8(n_next, "next").utf8(n_value, "value");
    b.utf8(n_data, "data").utf8(n_owner, "owner").utf8(n_extra, "extra").utf8(n_referent, "referent");

    for (unsigned i = 0; i < session_count; ++i) {
        sessions.push_back(0x100000 + i * 0x20);
        payloads.push_back(0x400000 + std::uint64_t{i} * 0x1000);
    }
    for (unsigned i = 0; i < chain; ++i) nodes.push_back(0x800000 + i * 0x20);
    for (unsigned i = 0; i < blob_count; ++i) blobs.push_back(0xC00000 + i * 0x20);

    b.begin_segment();
    b.class_dump(object_class, 0, {});
    b.class_dump(list_class, object_class, {{n_size, t_int}, {n_elements, t_object}});
    b.class_dump(
        holder_class, object_class, {},
        {{n_leak, t_object, values(8).id(list_id)}, {n_chain, t_object, values(8).id(nodes.empty() ? 0 : nodes[0])}});
    b.class_dump(session_class, object_class, {{n_user, t_object}, {n_payload, t_object}});
    b.class_dump(node_class, object_class, {{n_next, t_object}, {n_value, t_long}});
    b.class_dump(blob_class, object_class, {{n_data, t_object}});
    b.class_dump(array_class, object_class, {});
    b.class_dump(base_class, object_class, {{n_owner, t_object}});
    b.class_dump(derived_class, base_class, {{n_extra, t_int}});
    b.class_dump(reference_class, object_class, {{n_referent, t_object}});
    b.class_dump(weak_class, reference_class, {});
    b.root_sticky_class(holder_class);

    b.instance(list_id, list_class, values(8).u4(session_count).id(elements_id).bytes());
    b.object_array(elements_id, array_class, std::span<const std::uint64_t>(sessions));
    for (unsigned i = 0; i < session_count; ++i) {
        b.instance(sessions[i], session_class, values(8).id(0).id(payloads[i]).bytes());
        b.primitive_array(payloads[i], t_byte, payload_bytes);
    }
    for (unsigned i = 0; i < chain; ++i)
        b.instance(nodes[i], node_class, values(8).id(i + 1 < chain ? nodes[i + 1] : 0).u8(i).bytes());
    for (unsigned i = 0; i < blob_count; ++i) {
        b.instance(blobs[i], blob_class, values(8).id(blobs[i] + 0x10).bytes());
        b.primitive_array(blobs[i] + 0x10, t_byte, blob_bytes);
        b.root_jni_global(blobs[i], 0);
    }
    if (session_count > 7) b.root_jni_global(sessions[7], 0);
    // Derived's data: its own field first, then Base's.
    b.instance(derived_id, derived_class, values(8).u4(42).id(derived_held_id).bytes());
    b.primitive_array(derived_held_id, t_byte, 16);
    b.root_jni_global(derived_id, 0);
    b.instance(weak_id, weak_class, values(8).id(weak_referent_id).bytes());
    b.primitive_array(weak_referent_id, t_byte, 64);
    b.root_jni_global(weak_id, 0);
    b.end_segment();
}

}  // namespace heapd::test
