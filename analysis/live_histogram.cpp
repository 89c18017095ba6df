#include "analysis/live_histogram.h"

#include <string>
#include <unordered_map>
#include <utility>

#include "formats/hprof/id_map.h"

namespace heapd {
inline namespace analysis {

template <typename Node>
void count_reachable(const basic_object_graph<Node>& g, const basic_dominator_tree<Node>& d,
                     std::vector<histogram_entry>& histogram) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> per_key(g.key_count());  // instances, bytes
    for (Node node = 0; node < g.size(); ++node) {
        if (!d.reachable(node)) continue;
        auto& k = per_key[g.class_key(node)];
        ++k.first;
        k.second += g.shallow_size(node);
    }
    id_map<std::uint32_t> key_by_class;
    std::unordered_map<std::string, std::uint32_t> key_by_name;  // keys of no class: primitive arrays
    for (std::uint32_t key = 0; key < g.key_count(); ++key) {
        if (g.key_class_id(key) != 0)
            key_by_class.insert(g.key_class_id(key), key);
        else
            key_by_name.emplace(g.key_name(key), key);
    }
    // Primitive arrays by name first: their row may carry the id of a class such as [I, whose key
    // (if any) no object has.
    for (histogram_entry& e : histogram) {
        auto named = key_by_name.find(e.class_name);
        const std::uint32_t* key = named != key_by_name.end() ? &named->second : key_by_class.find(e.class_id);
        if (key == nullptr) continue;
        e.reachable_instances = per_key[*key].first;
        e.reachable_bytes = per_key[*key].second;
    }
}

template void count_reachable(const object_graph&, const dominator_tree&, std::vector<histogram_entry>&);
template void count_reachable(const wide_object_graph&, const wide_dominator_tree&, std::vector<histogram_entry>&);

}  // namespace analysis
}  // namespace heapd
