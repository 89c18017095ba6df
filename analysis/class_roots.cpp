#include "analysis/class_roots.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "formats/hprof/java_names.h"
#include "formats/hprof/object_locator.h"

namespace heapd {
inline namespace analysis {
namespace {

// The JDK's own class loaders below the bootstrap one: JDK 9 and later, then JDK 8 and older.
constexpr std::array<std::string_view, 4> system_loaders = {
    "jdk.internal.loader.ClassLoaders$AppClassLoader", "jdk.internal.loader.ClassLoaders$PlatformClassLoader",
    "sun.misc.Launcher$AppClassLoader", "sun.misc.Launcher$ExtClassLoader"};

}  // namespace

std::vector<std::uint64_t> inferred_class_roots(const record_index& idx, const class_table& classes,
                                                const census_result& census) {
    std::vector<std::uint64_t> out;
    if (census.roots[static_cast<unsigned>(root_kind::sticky_class)] != 0 || classes.size() == 0) return out;
    std::vector<std::uint64_t> loaders;
    for (const class_info& c : classes.all())
        if (c.dump.loader_id() != 0) loaders.push_back(c.dump.loader_id());
    std::sort(loaders.begin(), loaders.end());
    loaders.erase(std::unique(loaders.begin(), loaders.end()), loaders.end());
    object_locator found(idx, loaders);
    std::vector<std::uint64_t> system;  // sorted, as loaders is
    for (std::uint64_t id : loaders) {
        const located_object* o = found.find(id);
        if (o == nullptr || o->tag != 0x21) continue;
        const class_info* c = classes.find(o->instance.class_id);
        if (c == nullptr) continue;
        if (std::any_of(system_loaders.begin(), system_loaders.end(),
                        [&](std::string_view name) { return same_class_name(c->raw_name, name); }))
            system.push_back(id);
    }
    for (const class_info& c : classes.all()) {
        const std::uint64_t loader = c.dump.loader_id();
        if (loader == 0 || std::binary_search(system.begin(), system.end(), loader)) out.push_back(c.id());
    }
    return out;
}

}  // namespace analysis
}  // namespace heapd
