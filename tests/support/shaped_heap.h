#pragma once
// A synthetic dump with known leak shapes (a static list of sessions, a long linked chain, many
// small blobs each held by its own root), and the graph analyses of any builder's dump.
#include <cstdint>
#include <vector>

#include "analysis/census.h"
#include "analysis/dominator_tree.h"
#include "analysis/object_graph.h"
#include "formats/hprof/class_table.h"
#include "formats/hprof/record_index.h"
#include "support/hprof_builder.h"

namespace heapd::test {

// The record index, classes, census, graph and dominator tree of a dump, kept alive together.
struct analyzed {
    record_index idx;
    class_table classes;
    census_result census;
    object_graph graph;
    dominator_tree dom;
    explicit analyzed(const hprof_builder& b, bool instances_reference_their_class = false);

private:
    census_result run_census();
};

// Class Holder (a sticky-class root) has statics LEAK -> java.util.ArrayList{size, elementData}
// -> java.lang.Object[sessions] -> Session{user, payload byte[payload_bytes]}, and CHAIN -> Node{next,
// value} x chain; blobs Blob{data byte[blob_bytes]} are each held by a JNI global root. Session 7
// is also a JNI global root. Derived (extends Base{owner}) adds {extra}; one Derived instance, a
// JNI global root, holds a byte[] through the inherited field owner. A WeakReference root refers
// to an otherwise unreferenced byte[].
struct shaped_heap {
    static constexpr std::uint64_t object_class = 0x100, list_class = 0x101, holder_class = 0x102,
                                   session_class = 0x103, node_class = 0x104, blob_class = 0x105, array_class = 0x106,
                                   base_class = 0x107, derived_class = 0x108, reference_class = 0x109,
                                   weak_class = 0x10A;
    static constexpr std::uint64_t list_id = 0x20000, elements_id = 0x20100, derived_id = 0x20200,
                                   derived_held_id = 0x20300, weak_id = 0x20400, weak_referent_id = 0x20500;
    hprof_builder b{8};
    std::vector<std::uint64_t> sessions, payloads, nodes, blobs;

    shaped_heap(unsigned session_count = 100, unsigned payload_bytes = 2000, unsigned chain = 3000,
                unsigned blob_count = 200, unsigned blob_bytes = 400);
};

}  // namespace heapd::test
