#include "analysis/watched_objects.h"

#include <algorithm>
#include <string_view>

#include "analysis/dump_origin.h"
#include "analysis/path_description.h"
#include "analysis/root_paths.h"
#include "formats/hprof/java_strings.h"
#include "formats/hprof/object_locator.h"

namespace heapd {
inline namespace analysis {
namespace {

// Chains looked at for Binder-held roots.
constexpr unsigned max_paths = 5;

// Whether class_id is android.os.Binder or extends it.
bool is_binder(const class_table& classes, std::uint64_t class_id) {
    for (unsigned depth = 0; class_id != 0 && depth < max_class_depth; ++depth) {
        const class_info* c = classes.find(class_id);
        if (c == nullptr) return false;
        if (classes.java_name(class_id) == "android.os.Binder") return true;
        class_id = c->super_id();
    }
    return false;
}

}  // namespace

template <typename Node>
std::vector<watched_object> find_watched_objects(const record_index& idx, const class_table& classes,
                                                 const basic_object_graph<Node>& g,
                                                 const basic_dominator_tree<Node>& d) {
    std::vector<watched_object> out;
    std::vector<std::uint8_t> watcher_key(g.key_count(), 0);
    bool any = false;
    for (std::uint32_t k = 0; k < g.key_count(); ++k)
        if (g.key_class_id(k) != 0 && std::string_view(g.key_name(k)).ends_with(".KeyedWeakReference")) {
            watcher_key[k] = 1;
            any = true;
        }
    if (!any) return out;
    const record_finder finder = [&g](std::uint64_t id) -> std::optional<std::uint64_t> {
        const Node node = g.node_of(id);
        if (node == basic_object_graph<Node>::no_node) return std::nullopt;
        return g.record_offset(node);
    };
    std::vector<std::uint64_t> refs;
    for (Node v = 0; v < g.size(); ++v)
        if (watcher_key[g.class_key(v)]) refs.push_back(g.id(v));
    const object_locator found(idx, refs, finder);
    // Per watched object: its referent, then the ids of its key and description Strings.
    std::vector<std::uint64_t> referents, strings;
    for (std::uint64_t id : refs) {
        const located_object* o = found.find(id);
        if (o == nullptr || o->tag != 0x21) continue;
        const std::uint64_t referent = read_field(classes, o->instance, "referent").value_or(0);
        if (referent == 0 || g.node_of(referent) == basic_object_graph<Node>::no_node) continue;  // cleared: gone
        referents.push_back(referent);
        strings.push_back(read_field(classes, o->instance, "key").value_or(0));
        // LeakCanary 1 calls it name, LeakCanary 2 description.
        auto name = read_field(classes, o->instance, "description");
        strings.push_back(name ? *name : read_field(classes, o->instance, "name").value_or(0));
    }
    const std::vector<std::string> text = read_strings(idx, classes, strings, finder);
    for (std::size_t i = 0; i < referents.size(); ++i) {
        const Node node = g.node_of(referents[i]);
        watched_object w;
        w.key = text[2 * i];
        w.description = text[2 * i + 1];
        w.object = {referents[i], node_name(g, classes, node), g.shallow_size(node), d.retained(node)};
        w.reachable = d.reachable(node);
        if (w.reachable) {
            const auto paths = paths_from_roots(g, node, max_paths);
            w.only_binder_held = !paths.empty();
            constexpr std::uint32_t jni_global = 1u << static_cast<unsigned>(root_kind::jni_global);
            for (const auto& p : paths)
                w.only_binder_held = w.only_binder_held && (g.root_kinds_of(p.front()) & jni_global) != 0 &&
                                     p.size() > 1 && is_binder(classes, g.key_class_id(g.class_key(p.front())));
            if (!paths.empty()) w.path = describe_path(g, classes, paths.front());
        }
        out.push_back(std::move(w));
    }
    std::stable_sort(out.begin(), out.end(), [](const watched_object& a, const watched_object& b) {
        if (a.reachable != b.reachable) return a.reachable;
        return a.object.retained_bytes > b.object.retained_bytes;
    });
    return out;
}

template std::vector<watched_object> find_watched_objects(const record_index&, const class_table&, const object_graph&,
                                                          const dominator_tree&);
template std::vector<watched_object> find_watched_objects(const record_index&, const class_table&,
                                                          const wide_object_graph&, const wide_dominator_tree&);

}  // namespace analysis
}  // namespace heapd
