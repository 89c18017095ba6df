#pragma once
// Names the references along a path of graph nodes: which static or instance field, or which
// array element, of each object holds the next one, read back from the objects' records.
#include <cstdint>
#include <span>
#include <type_traits>

#include "analysis/object_graph.h"
#include "formats/hprof/class_table.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace analysis {

// The path (root first) as report steps, with runs of one class through one field (a linked
// chain) folded into a single step with a repeat count.
template <typename Node>
gc_path describe_path(const basic_object_graph<Node>& g, const class_table& classes,
                      std::type_identity_t<std::span<const Node>> nodes);

// The name a report gives a node: "class NAME" for class objects, else its class's name.
template <typename Node>
std::string node_name(const basic_object_graph<Node>& g, const class_table& classes, std::type_identity_t<Node> node);

}  // namespace analysis
}  // namespace heapd
