#include "analysis/object_graph.h"

#include <algorithm>
#include <thread>

#include "formats/hprof/heap_walk.h"
#include "formats/hprof/java_names.h"

namespace heapd {
inline namespace analysis {

// Builds an object graph: collects ids, numbers them, then counts and fills references.
template <typename Node>
struct graph_builder {
    using graph = basic_object_graph<Node>;
    static constexpr Node no_node = graph::no_node;
    graph_builder(const record_index& i, const class_table& c, const census_result& s, const graph_options& o,
                  graph& out)
        : idx(i), classes(c), census(s), options(o), g(out), id_size(i.id_size()) {}

    const record_index& idx;
    const class_table& classes;
    const census_result& census;
    graph_options options;
    graph& g;
    unsigned id_size;
    // Per class, what the walks need of it, found with one lookup: its key, the shallow size of
    // its instances in units of 8 bytes, and its reference fields (an index into ref_offsets).
    struct class_entry {
        std::uint32_t key, units, fields;
    };
    id_map<std::uint32_t> entry_of;  // class id -> index into entries
    std::vector<class_entry> entries;
    std::array<std::uint32_t, 12> prim_key{};  // key + 1 per primitive type
    std::uint32_t class_object_key = 0, unknown_key = 0;
    std::vector<std::vector<std::uint32_t>> ref_offsets;  // the last one is empty (unknown classes)
    class_entry unknown_class{};
    unsigned threads = 1;

    std::uint32_t add_key(std::string name, std::uint64_t class_id = 0) {
        g.key_names_.push_back(std::move(name));
        g.key_class_ids_.push_back(class_id);
        return static_cast<std::uint32_t>(g.key_names_.size() - 1);
    }
    // Keys and reference field lists of every class, made before the parallel walks, which only
    // read them: class keys in class table order, then the primitive arrays in type order.
    void prepare_classes() {
        for (const class_info& c : classes.all()) {
            auto [slot, inserted] = entry_of.insert(c.id(), static_cast<std::uint32_t>(entries.size()));
            if (!inserted) continue;
            const std::uint32_t* size = census.instance_sizes.find(c.id());
            entries.push_back({add_key(classes.java_name(c.id()), c.id()), units(size ? *size : 0),
                               static_cast<std::uint32_t>(ref_offsets.size())});
            ref_offsets.push_back(compute_reference_fields(c.id()));
        }
        for (std::uint8_t type = 4; type <= 11; ++type)
            prim_key[type] = add_key(std::string(primitive_name(type)) + "[]") + 1;
        const class_info* cc = classes.find_by_name("java.lang.Class");
        class_object_key = cc ? entries[*entry_of.find(cc->id())].key : add_key("java.lang.Class");
        unknown_key = add_key("<unknown class>");
        unknown_class = {unknown_key, 0, static_cast<std::uint32_t>(ref_offsets.size())};
        ref_offsets.emplace_back();
    }
    const class_entry& entry_for(std::uint64_t class_id) const {
        const std::uint32_t* i = entry_of.find(class_id);
        return i ? entries[*i] : unknown_class;
    }
    std::uint32_t key_for_primitive(std::uint8_t type) const { return prim_key[type] - 1; }
    // Offsets in instance data of the reference fields of class_id and its supers; the referent of
    // java.lang.ref.Reference is left out, since it does not keep its object alive.
    std::vector<std::uint32_t> compute_reference_fields(std::uint64_t class_id) const {
        std::vector<std::uint32_t> offsets;
        std::uint32_t off = 0;
        const class_info* c = classes.find(class_id);
        for (int depth = 0; c != nullptr && depth < 4096; ++depth) {
            bool is_reference = same_class_name(c->raw_name, "java.lang.ref.Reference");
            c->dump.for_each_field([&](const class_dump_view::field& f) {
                if (f.type == 2 && !(is_reference && idx.utf8(f.name_id) == "referent")) offsets.push_back(off);
                off += value_size(f.type, id_size);
            });
            c = classes.find(c->super_id());
        }
        return offsets;
    }
    static std::uint32_t units(std::uint64_t bytes) {
        return static_cast<std::uint32_t>(std::min<std::uint64_t>((bytes + 7) / 8, ~std::uint32_t{0}));
    }

    // Where the first part's walk is, told to the progress callback every 2^16 objects: that part,
    // walked on the calling thread, stands for all of them (the parts are of about equal bytes).
    struct part_progress {
        const progress_callback* progress = nullptr;
        std::uint64_t begin = 0, bytes = 1;
        unsigned walk = 0;  // which of the three walks (0, 1, 2)
        std::uint32_t count = 0;
        void at(std::uint64_t offset) {
            if (progress == nullptr || (++count & 0xFFFF) != 0) return;
            const double part = std::min(1.0, static_cast<double>(offset - begin) / static_cast<double>(bytes));
            (*progress)((walk + part) / 3);
        }
    };

    // Pass 1, per part of the dump: every object and class with its record offset; the roots' ids.
    // Each visitor on cache lines of its own: the walks' threads write to theirs all the time.
    struct alignas(64) collect : heap_visitor {
        part_progress tick;
        big_vector<typename graph::node_record> nodes;
        std::vector<std::pair<std::uint64_t, root_kind>> roots;
        void root(const root_view& r) { roots.emplace_back(r.object_id, r.kind); }
        void class_dump(const class_dump_view& c) { nodes.push_back({c.class_id(), c.offset}); }
        void instance(const instance_view& v) {
            tick.at(v.offset);
            nodes.push_back({v.id, v.offset});
        }
        void object_array(const object_array_view& v) {
            tick.at(v.offset);
            nodes.push_back({v.id, v.offset});
        }
        void primitive_array(const primitive_array_view& v) {
            tick.at(v.offset);
            nodes.push_back({v.id, v.offset});
        }
    };

    // Passes 2 and 3: with fill false, sets keys and sizes and counts references per node; with
    // fill true, writes them. Records whose id lost to a duplicate are skipped.
    struct alignas(64) references : heap_visitor {
        const graph_builder* b;
        bool fill;
        part_progress tick;
        std::uint64_t last_class = 0;
        const class_entry* last_entry = nullptr;
        // The entry of class_id; objects of one class often follow each other.
        const class_entry& entry(std::uint64_t class_id) {
            if (last_entry == nullptr || class_id != last_class) {
                last_entry = &b->entry_for(class_id);
                last_class = class_id;
            }
            return *last_entry;
        }
        Node expected = 0;  // the node after the last one owned: records mostly come in id order
        Node own(std::uint64_t id, std::uint64_t offset) {
            const auto& nodes = b->g.nodes_;
            Node n = expected < nodes.size() && nodes[expected].id == id ? expected : b->g.node_of(id);
            if (n == no_node || nodes[n].offset != offset) return no_node;
            expected = n + 1;
            return n;
        }
        template <class Each>
        void emit(Node node, std::uint32_t count, Each&& each) {
            if (!fill) {
                b->g.edge_low_[node + 1] = count;
                return;
            }
            std::uint64_t at = b->g.edge_begin(node);
            each([&](std::uint64_t id) { b->g.edges_[at++] = b->g.node_of(id); });
        }
        void class_dump(const class_dump_view& c) {
            Node n = own(c.class_id(), c.offset);
            if (n == no_node) return;
            auto each = [&](auto&& put) {
                for (std::uint64_t id : {c.super_id(), c.loader_id(), c.signers_id(), c.protection_domain_id()})
                    if (id != 0) put(id);
                c.for_each_static([&](const class_dump_view::static_field& s) {
                    if (s.type == 2) {
                        std::uint64_t id = be::id(s.value.data(), b->id_size);
                        if (id != 0) put(id);
                    }
                });
            };
            if (!fill) {
                b->g.key_[n] = b->class_object_key;
                const std::uint32_t* size = b->census.mirror_sizes.find(c.class_id());
                b->g.shallow_[n] = units(size ? *size : 0);
                std::uint32_t count = 0;
                each([&](std::uint64_t) { ++count; });
                return emit(n, count, each);
            }
            emit(n, 0, each);
        }
        void instance(const instance_view& v) {
            tick.at(v.offset);
            Node n = own(v.id, v.offset);
            if (n == no_node) return;
            const class_entry& e = entry(v.class_id);
            const auto& fields = b->ref_offsets[e.fields];
            const bool link_class = b->options.instances_reference_their_class;
            auto each = [&](auto&& put) {
                for (std::uint32_t off : fields) {
                    if (off + b->id_size > v.data.size()) break;
                    std::uint64_t id = be::id(v.data.data() + off, b->id_size);
                    if (id != 0) put(id);
                }
                if (link_class) put(v.class_id);
            };
            if (!fill) {
                b->g.key_[n] = e.key;
                b->g.shallow_[n] = e.units;
                std::uint32_t count = 0;
                each([&](std::uint64_t) { ++count; });
                return emit(n, count, each);
            }
            emit(n, 0, each);
        }
        void object_array(const object_array_view& v) {
            tick.at(v.offset);
            Node n = own(v.id, v.offset);
            if (n == no_node) return;
            const bool link_class = b->options.instances_reference_their_class;
            auto each = [&](auto&& put) {
                for (std::uint32_t i = 0; i < v.length; ++i)
                    if (std::uint64_t id = v.element(i); id != 0) put(id);
                if (link_class) put(v.class_id);
            };
            if (!fill) {
                b->g.key_[n] = entry(v.class_id).key;
                b->g.shallow_[n] = units(array_shallow_size(*b->census.vm, 2, v.length));
                std::uint32_t count = 0;
                each([&](std::uint64_t) { ++count; });
                return emit(n, count, each);
            }
            emit(n, 0, each);
        }
        void primitive_array(const primitive_array_view& v) {
            tick.at(v.offset);
            Node n = own(v.id, v.offset);
            if (n == no_node || fill) return;
            b->g.key_[n] = b->key_for_primitive(v.type);
            b->g.shallow_[n] = units(array_shallow_size(*b->census.vm, v.type, v.length));
        }
    };

    // The heap records split into `threads` runs of about equal bytes, in file order.
    std::vector<std::span<const hprof_record>> parts() const {
        const auto& recs = idx.heap_records();
        std::uint64_t total = 0;
        for (const hprof_record& r : recs) total += r.body.size();
        std::vector<std::span<const hprof_record>> out;
        std::size_t first = 0;
        std::uint64_t seen = 0;
        for (std::size_t i = 0; i < recs.size(); ++i) {
            seen += recs[i].body.size();
            if (out.size() + 1 < threads && seen * threads >= total * (out.size() + 1)) {
                out.emplace_back(recs.data() + first, i + 1 - first);
                first = i + 1;
            }
        }
        out.emplace_back(recs.data() + first, recs.size() - first);
        return out;
    }
    // Runs make_visitor(part) over each part, the parts on their own threads; returns the visitors.
    // walk (0, 1 or 2) says which of the three walks it is, for progress: the first part, walked
    // on this thread, stands for all of them (the parts are of about equal bytes).
    template <class V, class Make>
    std::vector<V> walk_parts(Make make_visitor, unsigned walk_number) const {
        auto ps = parts();
        std::vector<V> visitors;
        for (std::size_t i = 0; i < ps.size(); ++i) visitors.push_back(make_visitor());
        if (options.progress && !ps.empty() && !ps[0].empty()) {
            const hprof_record &first = ps[0].front(), &last = ps[0].back();
            visitors[0].tick = {&options.progress, first.body_offset,
                                std::max<std::uint64_t>(last.body_offset + last.body.size() - first.body_offset, 1),
                                walk_number};
        }
        auto walk = [&](std::size_t i) {
            for (const hprof_record& rec : ps[i]) (void)walk_heap_body(rec.body, rec.body_offset, id_size, visitors[i]);
            if (i == 0 && options.progress) options.progress((walk_number + 1.0) / 3);
        };
        std::vector<std::thread> workers;
        for (std::size_t i = 1; i < ps.size(); ++i) workers.emplace_back(walk, i);
        walk(0);
        for (std::thread& t : workers) t.join();
        return visitors;
    }

    // Makes pass 1's visitors, one per part in order, each with its nodes' room reserved from the
    // census's count, so that no vector grows by copying (fresh pages are what this pass costs most):
    // the first part room for every node, the others their share of the bytes and an eighth more.
    auto reserved_collect() const {
        std::vector<double> share;
        std::uint64_t all = 0;
        for (const auto& part : parts()) {
            std::uint64_t bytes = 0;
            for (const hprof_record& r : part) bytes += r.body.size();
            share.push_back(static_cast<double>(bytes));
            all += bytes;
        }
        for (double& s : share) s /= static_cast<double>(std::max<std::uint64_t>(all, 1));
        return [share = std::move(share), made = std::size_t{0}, expected = census.object_count()]() mutable {
            collect c;
            const double part = made < share.size() ? share[made] : 1.0;
            const auto room = static_cast<std::uint64_t>(static_cast<double>(expected) * part * 1.125) + 4096;
            c.nodes.reserve(made++ == 0 ? expected : std::min(room, expected));
            return c;
        };
    }

    result<void> run() {
        prepare_classes();
        // What cannot fit is refused before the dump is walked (big_memory::expect): at the least
        // each object's id and offset are collected (duplicates too), then, beside them, its key,
        // size, first edge and offset (offsets_ is filled before nodes_ goes).
        big_memory::expect(census.object_count() * sizeof(typename graph::node_record));
        auto collected = walk_parts<collect>(reserved_collect(), 0);
        std::size_t total = 0;
        for (const collect& c : collected) total += c.nodes.size();
        // no_node and the number below it (the dominator tree's virtual root) are never nodes.
        if (sizeof(Node) < 8 && total >= std::min<std::uint64_t>(options.narrow_nodes_below, no_node))
            return fail(error_code::unsupported,
                        "the heap holds " + std::to_string(total) + " objects, too many for 32-bit node numbers");
        // The first part's vector has room for all (reserved_collect): the others are appended to it.
        g.nodes_ = std::move(collected.front().nodes);
        g.nodes_.reserve(total);
        std::vector<std::pair<std::uint64_t, root_kind>> root_ids;
        for (collect& c : collected) {
            g.nodes_.insert(g.nodes_.end(), c.nodes.begin(), c.nodes.end());
            root_ids.insert(root_ids.end(), c.roots.begin(), c.roots.end());
            c = collect{};
        }
        // Classes taken as roots in a dump that marks none (class_roots.h): sticky classes, as HotSpot marks them.
        for (std::uint64_t id : census.inferred_class_roots) root_ids.emplace_back(id, root_kind::sticky_class);
        sort_nodes();
        // A damaged dump may hold an id twice: the first record in the file keeps it.
        g.nodes_.erase(
            std::unique(g.nodes_.begin(), g.nodes_.end(), [](const auto& a, const auto& b) { return a.id == b.id; }),
            g.nodes_.end());
        g.nodes_.shrink_to_fit();
        build_directory();
        const std::size_t n = g.nodes_.size();
        big_memory::expect(std::uint64_t{n} * (sizeof(std::uint32_t) * 3 + sizeof(std::uint64_t)));
        g.key_.assign(n, 0);
        g.shallow_.assign(n, 0);
        g.edge_low_.assign(n + 1, 0);
        walk_parts<references>([this] { return references{{}, this, false, {}, 0, nullptr}; }, 1);
        const std::uint64_t edges = index_edges();
        // The references now counted: they and the offsets are what is still to come.
        big_memory::expect(edges * sizeof(Node) + std::uint64_t{n} * sizeof(std::uint64_t));
        g.edges_.assign(edges, no_node);
        walk_parts<references>([this] { return references{{}, this, true, {}, 0, nullptr}; }, 2);
        std::vector<std::pair<Node, std::uint32_t>> rooted;  // (node, kind bit)
        for (auto [id, kind] : root_ids)
            if (Node node = g.node_of(id); node != no_node)
                rooted.emplace_back(node, 1u << static_cast<unsigned>(kind));
        std::sort(rooted.begin(), rooted.end());
        for (auto [node, bit] : rooted) {
            if (g.roots_.empty() || g.roots_.back() != node) {
                g.roots_.push_back(node);
                g.root_kinds_.push_back(0);
            }
            g.root_kinds_.back() |= bit;
        }
        // Ids are read from the dump from now on; only the offsets are kept.
        g.offsets_.resize(g.nodes_.size());
        for (std::size_t i = 0; i < g.offsets_.size(); ++i) g.offsets_[i] = g.nodes_[i].offset;
        big_vector<typename graph::node_record>().swap(g.nodes_);
        const auto& recs = idx.heap_records();
        if (!recs.empty()) g.dump_ = recs.front().body.data() - recs.front().body_offset;
        g.id_size_ = id_size;
        return {};
    }

    // Turns the counts in edge_low_[node + 1] into first-edge indexes (their low bits, and the nodes
    // where they wrap); the number of references.
    std::uint64_t index_edges() {
        g.edge_bits_ = std::clamp(options.edge_index_bits, 1u, 32u);
        const std::uint64_t mask = (std::uint64_t{1} << g.edge_bits_) - 1;
        std::uint64_t total = 0;
        for (std::size_t i = 1; i < g.edge_low_.size(); ++i) {
            total += g.edge_low_[i];
            g.edge_low_[i] = static_cast<std::uint32_t>(total & mask);
            while ((total >> g.edge_bits_) > g.edge_wraps_.size()) g.edge_wraps_.push_back(static_cast<Node>(i));
        }
        return total;
    }

    // Ids come mostly ascending (HotSpot dumps walk the heap in address order): merge the sorted
    // runs pairwise, which is linear per level, instead of sorting from scratch.
    void sort_nodes() {
        auto before = [](const typename graph::node_record& a, const typename graph::node_record& b) {
            return a.id != b.id ? a.id < b.id : a.offset < b.offset;
        };
        auto& v = g.nodes_;
        std::vector<std::size_t> runs = {0};
        for (std::size_t i = 1; i < v.size(); ++i)
            if (before(v[i], v[i - 1])) runs.push_back(i);
        if (runs.size() > v.size() / 64 + 1) {
            std::sort(v.begin(), v.end(), before);
            return;
        }
        runs.push_back(v.size());
        // The left run of each merge is copied aside (a big array: spilled like the rest when
        // memory is short), then both merge into place; the output never overtakes the right run.
        big_vector<typename graph::node_record> left;
        while (runs.size() > 2) {
            std::vector<std::size_t> merged = {0};
            for (std::size_t r = 0; r + 2 < runs.size(); r += 2) {
                left.assign(v.begin() + static_cast<std::ptrdiff_t>(runs[r]),
                            v.begin() + static_cast<std::ptrdiff_t>(runs[r + 1]));
                std::size_t out = runs[r], a = 0, b = runs[r + 1];
                while (a < left.size() && b < runs[r + 2]) v[out++] = before(v[b], left[a]) ? v[b++] : left[a++];
                while (a < left.size()) v[out++] = left[a++];
                merged.push_back(runs[r + 2]);
            }
            if (runs.size() % 2 == 0) merged.push_back(runs.back());  // an odd run out waits a level
            runs = std::move(merged);
        }
    }

    // Buckets of ids by their high bits, about four nodes a bucket, so node_of is a short search.
    void build_directory() {
        if (g.nodes_.empty()) return;
        g.min_id_ = g.nodes_.front().id;
        std::uint64_t span = g.nodes_.back().id - g.min_id_;
        unsigned shift = 0;
        while (shift < 63 && (span >> shift) > std::max<std::uint64_t>(g.nodes_.size() / 4, 1)) ++shift;
        g.shift_ = shift;
        std::size_t buckets = static_cast<std::size_t>(span >> shift) + 2;
        g.bucket_start_.assign(buckets, 0);
        std::size_t i = 0;
        for (std::size_t b = 0; b < buckets; ++b) {
            while (i < g.nodes_.size() && ((g.nodes_[i].id - g.min_id_) >> shift) < b) ++i;
            g.bucket_start_[b] = static_cast<Node>(i);
        }
    }
};

template <typename Node>
Node basic_object_graph<Node>::node_of(std::uint64_t id) const {
    if (bucket_start_.empty() || id < min_id_) return no_node;
    std::uint64_t b = (id - min_id_) >> shift_;
    if (b >= bucket_start_.size() - 1) return no_node;  // (b + 1 could wrap for an id near 2^64)
    // A binary search in the bucket: over the ids while the graph is built, then over the records.
    Node first = bucket_start_[b], last = bucket_start_[b + 1];
    const bool building = !nodes_.empty();
    while (first < last) {
        Node mid = first + (last - first) / 2;
        if ((building ? nodes_[mid].id : this->id(mid)) < id)
            first = mid + 1;
        else
            last = mid;
    }
    if (first == bucket_start_[b + 1]) return no_node;
    return (building ? nodes_[first].id : this->id(first)) == id ? first : no_node;
}

template <typename Node>
std::uint32_t basic_object_graph<Node>::root_kinds_of(Node node) const {
    auto it = std::lower_bound(roots_.begin(), roots_.end(), node);
    return it != roots_.end() && *it == node ? root_kinds_[static_cast<std::size_t>(it - roots_.begin())] : 0;
}

template <typename Node>
result<basic_object_graph<Node>> basic_object_graph<Node>::build(const record_index& idx, const class_table& classes,
                                                                 const census_result& census,
                                                                 const graph_options& options) {
    if (census.vm == nullptr) return fail(error_code::bad_value, "the census has not been finished");
    basic_object_graph g;
    graph_builder<Node> b(idx, classes, census, options, g);
    b.threads = options.threads != 0 ? options.threads : std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
    if (auto r = b.run(); !r) return std::unexpected(r.error());
    return g;
}

template class basic_object_graph<std::uint32_t>;
template class basic_object_graph<std::uint64_t>;

}  // namespace analysis
}  // namespace heapd
