#include "analysis/off_heap.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

#include "analysis/path_description.h"
#include "analysis/thread_groups.h"
#include "formats/hprof/heap_walk.h"
#include "formats/hprof/java_strings.h"

namespace heapd {
inline namespace analysis {
namespace {

// Keeps the instance record a visit finds.
struct instance_reader : heap_visitor {
    std::optional<instance_view> found;
    void instance(const instance_view& v) { found = v; }
};

// Keeps the primitive array record a visit finds.
struct array_reader : heap_visitor {
    std::optional<primitive_array_view> found;
    void primitive_array(const primitive_array_view& v) { found = v; }
};

// Paths to objects of one kind, grouped by their shape: the same root, then classes of the same name
// at each step. One path is kept per group as its example, described only for the groups reported.
template <typename Node>
class path_groups {
public:
    path_groups(const basic_object_graph<Node>& g, const class_table& classes) : g_(g), classes_(classes) {}

    void add(std::vector<Node> path, std::uint64_t bytes) {
        if (path.empty()) return;
        // Class names, not class keys: copies of one class from different loaders are one shape.
        std::string key = std::to_string(static_cast<std::uint64_t>(path.front()));
        for (std::size_t i = 1; i < path.size(); ++i) (key += '\n') += g_.key_name(g_.class_key(path[i]));
        group& a = groups_[std::move(key)];
        if (a.count++ == 0) a.example = std::move(path);
        a.bytes += bytes;
    }

    // The largest groups (by bytes when by_bytes, else by count; ties keep the shapes' order).
    std::vector<holder_group> largest(unsigned max, bool by_bytes) const {
        std::vector<const group*> order;
        for (const auto& [key, a] : groups_) order.push_back(&a);
        std::stable_sort(order.begin(), order.end(), [by_bytes](const group* a, const group* b) {
            return by_bytes ? a->bytes > b->bytes : a->count > b->count;
        });
        if (order.size() > max) order.resize(max);
        std::vector<holder_group> out;
        for (const group* a : order) out.push_back({a->count, a->bytes, describe_path(g_, classes_, a->example)});
        return out;
    }

private:
    struct group {
        std::uint64_t count = 0, bytes = 0;
        std::vector<Node> example;
    };
    const basic_object_graph<Node>& g_;
    const class_table& classes_;
    std::map<std::string, group> groups_;
};

template <typename Node>
std::optional<instance_view> instance_of(const basic_object_graph<Node>& g, const class_table& classes, Node v) {
    instance_reader r;
    if (!visit_record_at(classes.index(), g.record_offset(v), r)) return std::nullopt;
    return r.found;
}

// The class keys whose name is one of names.
template <typename Node>
std::vector<bool> keys_named(const basic_object_graph<Node>& g, std::initializer_list<std::string_view> names) {
    std::vector<bool> out(g.key_count());
    for (std::uint32_t k = 0; k < g.key_count(); ++k)
        out[k] = std::find(names.begin(), names.end(), g.key_name(k)) != names.end();
    return out;
}

// A long static of java.nio.Bits (JDK 9 and later name it in capitals, older JDKs in camel case),
// held directly or in an AtomicLong.
template <typename Node>
std::optional<std::uint64_t> bits_figure(const basic_object_graph<Node>& g, const class_table& classes,
                                         const class_info& bits, std::string_view upper, std::string_view camel) {
    const record_index& idx = classes.index();
    std::optional<std::uint64_t> out;
    bits.dump.for_each_static([&](const class_dump_view::static_field& s) {
        const std::string_view name = idx.utf8(s.name_id);
        if (out || (name != upper && name != camel)) return;
        if (s.type == 11 && s.value.size() == 8) {
            out = be::u8(s.value.data());
        } else if (s.type == 2 && s.value.size() == idx.id_size()) {
            const Node v = g.node_of(be::id(s.value.data(), idx.id_size()));
            if (v == basic_object_graph<Node>::no_node) return;
            if (auto atomic = instance_of(g, classes, v)) out = read_field(classes, *atomic, "value");
        }
    });
    return out;
}

template <typename Node>
direct_buffer_report direct_buffers(const basic_object_graph<Node>& g, const class_table& classes,
                                    const basic_root_paths<Node>& paths, unsigned max_groups) {
    direct_buffer_report r;
    const std::vector<bool> buffer = keys_named(g, {"java.nio.DirectByteBuffer", "java.nio.DirectByteBufferR"});
    path_groups<Node> holders(g, classes);
    for (Node v = 0; v < g.size(); ++v) {
        if (!buffer[g.class_key(v)]) continue;
        const auto o = instance_of(g, classes, v);
        if (!o) continue;
        auto field = [&](std::string_view name) { return read_field(classes, *o, name).value_or(0); };
        const std::uint64_t capacity = field("capacity") & 0xffffffffu;
        if (field("att") != 0) {
            ++r.views;
            continue;
        }
        const bool mapped = field("fd") != 0;
        if (!mapped && field("cleaner") == 0) {
            ++r.foreign;
            r.foreign_bytes += capacity;
            continue;
        }
        if (!paths.reachable(v)) {
            ++r.unreachable;
            r.unreachable_bytes += capacity;
            continue;
        }
        ++(mapped ? r.mapped : r.allocated);
        (mapped ? r.mapped_bytes : r.allocated_bytes) += capacity;
        holders.add(paths.path_to(v), capacity);
    }
    r.holders = holders.largest(max_groups, true);
    if (const class_info* bits = classes.find_by_name("java.nio.Bits")) {
        r.jvm_count = bits_figure(g, classes, *bits, "COUNT", "count");
        r.jvm_capacity_bytes = bits_figure(g, classes, *bits, "TOTAL_CAPACITY", "totalCapacity");
        r.jvm_reserved_bytes = bits_figure(g, classes, *bits, "RESERVED_MEMORY", "reservedMemory");
        r.jvm_max_bytes = bits_figure(g, classes, *bits, "MAX_MEMORY", "maxMemory");
    }
    return r;
}

// Android's Bitmaps: the pixel buffer a Bitmap holds (its byte[] mBuffer, Android 7 and older), else
// native pixels (mNativePtr, mNativeBitmap) of width × height × 4 bytes.
template <typename Node>
bitmap_report bitmaps(const basic_object_graph<Node>& g, const class_table& classes,
                      const basic_root_paths<Node>& paths, unsigned max_groups) {
    bitmap_report r;
    const std::vector<bool> bitmap = keys_named(g, {"android.graphics.Bitmap"});
    path_groups<Node> holders(g, classes);
    for (Node v = 0; v < g.size(); ++v) {
        if (!bitmap[g.class_key(v)]) continue;
        const auto o = instance_of(g, classes, v);
        if (!o) continue;
        auto field = [&](std::string_view name) { return read_field(classes, *o, name).value_or(0); };
        bitmap_entry e{g.id(v), static_cast<std::uint32_t>(field("mWidth")),
                       static_cast<std::uint32_t>(field("mHeight")), 0, false};
        const Node buffer = field("mBuffer") != 0 ? g.node_of(field("mBuffer")) : basic_object_graph<Node>::no_node;
        array_reader pixels;
        if (buffer != basic_object_graph<Node>::no_node &&
            visit_record_at(classes.index(), g.record_offset(buffer), pixels) && pixels.found) {
            e.in_heap = true;
            e.pixel_bytes = pixels.found->length;
        } else if (field("mNativePtr") != 0 || field("mNativeBitmap") != 0) {
            e.pixel_bytes = std::uint64_t{e.width} * e.height * 4;
        }
        if (!paths.reachable(v)) {
            ++r.unreachable;
            r.unreachable_bytes += e.pixel_bytes;
            continue;
        }
        if (e.pixel_bytes == 0) {
            ++r.recycled;
            continue;
        }
        ++(e.in_heap ? r.heap : r.native);
        (e.in_heap ? r.heap_bytes : r.native_bytes) += e.pixel_bytes;
        holders.add(paths.path_to(v), e.pixel_bytes);
        r.largest.push_back(e);
    }
    std::stable_sort(r.largest.begin(), r.largest.end(),
                     [](const bitmap_entry& a, const bitmap_entry& b) { return a.pixel_bytes > b.pixel_bytes; });
    if (r.largest.size() > max_groups) r.largest.resize(max_groups);
    r.holders = holders.largest(max_groups, true);
    return r;
}

template <typename Node>
class_loader_report class_loaders(const basic_object_graph<Node>& g, const basic_dominator_tree<Node>& d,
                                  const class_table& classes, const basic_root_paths<Node>& paths,
                                  unsigned max_groups) {
    class_loader_report r;
    std::map<std::uint64_t, std::uint64_t> defined;  // loader id → classes
    std::map<std::string, std::uint64_t> copies;     // class name → loaders defining it
    for (const class_info& c : classes.all()) {
        ++r.classes;
        const std::uint64_t loader = c.dump.loader_id();
        if (loader == 0)
            ++r.boot_classes;
        else
            ++defined[loader];
        if (!c.raw_name.empty() && c.raw_name.front() != '[') ++copies[classes.java_name(c.id())];
    }
    r.loaders = defined.size();
    std::map<std::string, loader_class_entry> by_class;
    path_groups<Node> holders(g, classes);
    for (const auto& [id, n] : defined) {
        const Node v = g.node_of(id);
        const std::string name =
            v == basic_object_graph<Node>::no_node ? "<not in the dump>" : g.key_name(g.class_key(v));
        loader_class_entry& e = by_class[name];
        e.class_name = name;
        ++e.loaders;
        e.classes += n;
        if (v == basic_object_graph<Node>::no_node) continue;
        if (!paths.reachable(v))
            ++r.unreachable;
        else
            holders.add(paths.path_to(v), d.retained(v));
    }
    for (auto& [name, e] : by_class) r.by_class.push_back(std::move(e));
    std::stable_sort(r.by_class.begin(), r.by_class.end(),
                     [](const auto& a, const auto& b) { return a.loaders > b.loaders; });
    for (const auto& [name, n] : copies)
        if (n > 1) {
            ++r.duplicated_classes;
            r.duplicates.push_back({name, n});
        }
    std::stable_sort(r.duplicates.begin(), r.duplicates.end(),
                     [](const auto& a, const auto& b) { return a.loaders > b.loaders; });
    if (r.duplicates.size() > max_groups) r.duplicates.resize(max_groups);
    r.holders = holders.largest(max_groups, false);
    return r;
}

// Who refers to the Thread objects besides the JVM's own bookkeeping (a thread group and its array of
// threads): a static list, a pool's worker. Of a thread's reachable referrers (at most a few, in node
// order; garbage such as the arrays a list outgrew is passed over) the first whose root path does not
// start at a thread is taken, else the first.
template <typename Node>
std::vector<holder_group> thread_holders(const basic_object_graph<Node>& g, const class_table& classes,
                                         const basic_root_paths<Node>& paths, const std::vector<thread_report>& threads,
                                         unsigned max_groups) {
    constexpr Node none = basic_object_graph<Node>::no_node;
    constexpr std::size_t kept = 4;
    std::vector<bool> is_thread(g.size());
    std::map<Node, std::vector<Node>> referrers;
    for (const thread_report& t : threads) {
        const Node v = t.id != 0 ? g.node_of(t.id) : none;
        if (v == none) continue;
        is_thread[v] = true;
        referrers[v];
    }
    if (referrers.empty()) return {};
    const std::vector<bool> group_key = keys_named(g, {"java.lang.ThreadGroup"});
    std::vector<Node> bookkeeping;  // the thread groups' arrays of threads
    for (Node u = 0; u < g.size(); ++u)
        if (group_key[g.class_key(u)])
            for (Node v : g.references(u)) bookkeeping.push_back(v);
    std::sort(bookkeeping.begin(), bookkeeping.end());
    for (Node u = 0; u < g.size(); ++u) {
        if (is_thread[u] || group_key[g.class_key(u)]) continue;
        for (Node v : g.references(u)) {
            if (v == none || !is_thread[v]) continue;
            if (std::binary_search(bookkeeping.begin(), bookkeeping.end(), u)) break;
            if (!paths.reachable(u)) break;
            std::vector<Node>& list = referrers[v];
            if (list.size() < kept && (list.empty() || list.back() != u)) list.push_back(u);
        }
    }
    path_groups<Node> holders(g, classes);
    for (const auto& [v, list] : referrers) {
        std::vector<Node> best;
        for (Node u : list) {
            std::vector<Node> p = paths.path_to(u);
            if (p.empty()) continue;
            const bool from_thread = is_thread[p.front()];
            if (best.empty() || !from_thread) best = std::move(p);
            if (!from_thread) break;
        }
        if (best.empty()) continue;
        best.push_back(v);
        holders.add(std::move(best), 0);
    }
    return holders.largest(max_groups, false);
}

}  // namespace

template <typename Node>
off_heap_report find_off_heap(const basic_object_graph<Node>& g, const basic_dominator_tree<Node>& d,
                              const class_table& classes, const basic_root_paths<Node>& paths,
                              const std::vector<thread_report>& threads, unsigned max_groups) {
    off_heap_report r;
    r.computed = true;
    r.threads = group_threads(threads);
    r.threads.holders = thread_holders(g, classes, paths, threads, max_groups);
    r.direct_buffers = direct_buffers(g, classes, paths, max_groups);
    r.bitmaps = bitmaps(g, classes, paths, max_groups);
    r.class_loaders = class_loaders(g, d, classes, paths, max_groups);
    return r;
}

template off_heap_report find_off_heap(const object_graph&, const dominator_tree&, const class_table&,
                                       const root_paths&, const std::vector<thread_report>&, unsigned);
template off_heap_report find_off_heap(const wide_object_graph&, const wide_dominator_tree&, const class_table&,
                                       const wide_root_paths&, const std::vector<thread_report>&, unsigned);

}  // namespace analysis
}  // namespace heapd
