#include "analysis/object_paths.h"
#include "analysis/class_roots.h"

#include <cstdio>

#include "analysis/analysis.h"
#include "analysis/census.h"
#include "analysis/dominator_tree.h"
#include "analysis/object_graph.h"
#include "analysis/path_description.h"
#include "analysis/root_paths.h"
#include "base/hex_text.h"
#include "formats/hprof/class_table.h"
#include "formats/hprof/heap_walk.h"
#include "formats/hprof/hprof_reader.h"
#include "formats/hprof/object_locator.h"
#include "formats/hprof/record_index.h"

namespace heapd {
inline namespace analysis {
namespace {

// The report of find_object_paths, on a graph of Node numbers.
template <typename Node>
result<object_paths_report> paths_to(const record_index& idx, const class_table& classes, const census_result& c,
                                     std::uint64_t id, unsigned max_paths) {
    using graph_type = basic_object_graph<Node>;
    auto graph = graph_type::build(idx, classes, c);
    if (!graph) return std::unexpected(graph.error());
    const Node node = graph->node_of(id);
    if (node == graph_type::no_node) {
        return fail(error_code::not_found, "the dump holds no object " + hex_id(id));
    }
    object_paths_report r;
    r.id = id;
    r.class_name = node_name(*graph, classes, node);
    r.shallow_bytes = graph->shallow_size(node);
    const object_locator record(idx, std::span(&id, 1), [&](std::uint64_t) { return graph->record_offset(node); });
    if (const located_object* o = record.find(id); o != nullptr && (o->tag == 0x22 || o->tag == 0x23)) {
        r.is_array = true;
        r.length = o->tag == 0x22 ? o->object_array.length : o->primitive_array.length;
    }
    const auto dom = basic_dominator_tree<Node>::compute(*graph);
    r.reachable = dom.reachable(node);
    r.retained_bytes = dom.retained(node);
    for (const auto& path : paths_from_roots(*graph, node, max_paths))
        r.paths.push_back(describe_path(*graph, classes, path));
    return r;
}

}  // namespace

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
    // The census counts at least the graph's nodes: 32-bit node numbers when they will do.
    if (c.object_count() < analysis_options{}.narrow_nodes_below)
        return paths_to<std::uint32_t>(idx, classes, c, id, max_paths);
    return paths_to<std::uint64_t>(idx, classes, c, id, max_paths);
}

}  // namespace analysis
}  // namespace heapd
