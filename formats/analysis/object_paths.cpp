#include "formats/analysis/object_paths.h"
#include "formats/analysis/class_roots.h"

#include <cstdio>

#include "formats/analysis/analysis.h"
#include "formats/analysis/census.h"
#include "formats/analysis/dominator_tree.h"
#include "formats/analysis/gc_paths.h"
#include "formats/analysis/object_graph.h"
#include "formats/analysis/path_description.h"
#include "formats/hprof/class_table.h"
#include "formats/hprof/heap_walk.h"
#include "formats/hprof/hprof_reader.h"
#include "formats/hprof/record_index.h"

namespace heapd {

result<object_paths_report> find_object_paths(std::span<const std::byte> data, std::uint64_t id, unsigned max_paths,
                                              unsigned dump) {
    auto reader = hprof_reader::parse(data);
    if (!reader) return std::unexpected(reader.error());
    record_index idx = record_index::build(*reader, dump);
    if (auto ok = check_dump_number(idx, dump); !ok) return std::unexpected(ok.error());
    class_table classes(idx);
    heap_census census(idx, classes, 0);
    walk_heap(idx, census);
    census_result c = census.finish();
    c.inferred_class_roots = inferred_class_roots(idx, classes, c);
    auto graph = object_graph::build(idx, classes, c);
    if (!graph) return std::unexpected(graph.error());
    std::uint32_t node = graph->node_of(id);
    if (node == object_graph::no_node) {
        char hex[32];
        std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(id));
        return fail(error_code::not_found, std::string("the dump holds no object ") + hex);
    }
    object_paths_report r;
    r.id = id;
    r.class_name = node_name(*graph, classes, node);
    r.shallow_bytes = graph->shallow_size(node);
    dominator_tree dom = dominator_tree::compute(*graph);
    r.reachable = dom.reachable(node);
    r.retained_bytes = dom.retained(node);
    for (const auto& path : paths_from_roots(*graph, node, max_paths))
        r.paths.push_back(describe_path(*graph, classes, path));
    return r;
}

}  // namespace heapd
