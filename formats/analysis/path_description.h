#pragma once
// Names the references along a path of graph nodes: which static or instance field, or which
// array element, of each object holds the next one, read back from the objects' records.
#include <cstdint>
#include <span>

#include "formats/analysis/object_graph.h"
#include "formats/hprof/class_table.h"
#include "formats/report/report.h"

namespace heapd {

// The path (root first) as report steps, with runs of one class through one field (a linked
// chain) folded into a single step with a repeat count.
gc_path describe_path(const object_graph& g, const class_table& classes, std::span<const std::uint32_t> nodes);

// The name a report gives a node: "class NAME" for class objects, else its class's name.
std::string node_name(const object_graph& g, const class_table& classes, std::uint32_t node);

}  // namespace heapd
