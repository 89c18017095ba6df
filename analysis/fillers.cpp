#include "analysis/fillers.h"

#include <algorithm>
#include <vector>

#include "analysis/stripped_check.h"
#include "formats/hprof/object_locator.h"

namespace heapd {
inline namespace analysis {

template <typename Node>
filler_counts find_fillers(const record_index& idx, const class_table& classes, const basic_object_graph<Node>& g,
                           const basic_dominator_tree<Node>& d) {
    filler_counts f;
    if (classes.find_by_name("jdk.internal.vm.FillerObject") == nullptr) return f;
    std::uint32_t int_array_key = ~std::uint32_t{0};
    for (std::uint32_t k = 0; k < g.key_count(); ++k)
        if (g.key_name(k) == "int[]") int_array_key = k;
    std::vector<std::uint64_t> ids;
    for (Node node = 0; node < g.size(); ++node)
        if (g.class_key(node) == int_array_key && !d.reachable(node)) ids.push_back(g.id(node));
    if (ids.empty()) return f;
    const object_locator found(idx, ids, [&g](std::uint64_t id) -> std::optional<std::uint64_t> {
        const Node node = g.node_of(id);
        if (node == basic_object_graph<Node>::no_node) return std::nullopt;
        return g.record_offset(node);
    });
    for (std::uint64_t id : ids) {
        const located_object* o = found.find(id);
        if (o == nullptr || o->tag != 0x23 || o->primitive_array.length % 2 != 0) continue;
        const std::uint64_t bytes = g.shallow_size(g.node_of(id));
        ++f.objects;
        f.bytes += bytes;
        if (o->primitive_array.length > 0 && all_zero(o->primitive_array.data)) {
            ++f.zero_objects;
            f.zero_bytes += bytes;
        }
    }
    return f;
}

template filler_counts find_fillers(const record_index&, const class_table&, const object_graph&,
                                    const dominator_tree&);
template filler_counts find_fillers(const record_index&, const class_table&, const wide_object_graph&,
                                    const wide_dominator_tree&);

void set_fillers_apart(analysis_report& r, const filler_counts& f) {
    if (f.objects == 0) return;
    r.retention.filler_objects = f.objects;
    r.retention.filler_bytes = f.bytes;
    auto ints = std::find_if(r.histogram.begin(), r.histogram.end(),
                             [](const histogram_entry& e) { return e.class_name == "int[]"; });
    if (ints != r.histogram.end()) {
        histogram_entry fillers{ints->class_id, std::string(filler_array_name), f.objects, f.bytes, 0, 0};
        ints->instances -= std::min(ints->instances, f.objects);
        ints->shallow_bytes -= std::min(ints->shallow_bytes, f.bytes);
        if (ints->instances == 0) r.histogram.erase(ints);
        r.histogram.push_back(std::move(fillers));
        std::stable_sort(r.histogram.begin(), r.histogram.end(),
                         [](const histogram_entry& a, const histogram_entry& b) {
                             return a.shallow_bytes != b.shallow_bytes ? a.shallow_bytes > b.shallow_bytes
                                                                       : a.class_name < b.class_name;
                         });
    }
    if (f.zero_objects == 0 || !r.waste.computed) return;
    for (auto it = r.waste.zero_arrays.begin(); it != r.waste.zero_arrays.end(); ++it) {
        if (it->class_name != "int[]") continue;
        const std::uint64_t bytes = std::min(it->bytes, f.zero_bytes);
        it->count -= std::min(it->count, f.zero_objects);
        it->bytes -= bytes;
        r.waste.zero_array_saving -= std::min(r.waste.zero_array_saving, bytes);
        r.waste.saving_bytes -= std::min(r.waste.saving_bytes, bytes);
        if (it->count == 0) r.waste.zero_arrays.erase(it);
        break;
    }
}

}  // namespace analysis
}  // namespace heapd
