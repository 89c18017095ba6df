// Retained sizes on a real JVM with known heap shapes (tests/java/Shapes.java), checked two ways:
// against the shapes themselves (what each must retain, from its objects' shallow sizes), and
// against VisualVM's heap library, an independent analyzer, object for object.
#include "analysis/retention.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "analysis/census.h"
#include "analysis/dominator_tree.h"
#include "analysis/object_graph.h"
#include "formats/hprof/dump_file.h"
#include "formats/hprof/heap_walk.h"
#include "formats/hprof/hprof_reader.h"
#include "formats/hprof/object_locator.h"
#include "support/generated_dump.h"
#include "support/jvm_process.h"

namespace heapd {
namespace {

constexpr unsigned top_n = 100;
constexpr std::uint32_t none = object_graph::no_node;

void require(bool ok, const std::string& what) {
    if (!ok) throw std::runtime_error(what);
}

// Shapes under fixed flags: one collector, a fixed heap, no class data sharing, and soft references
// kept through the dump's full GC however long the JVM has been idle.
std::string dump_shapes(const test::scratch_dir& dir) {
    test::demo_jvm jvm(test::java_main{"Shapes"},
                       {"-Xmx256m", "-XX:+UseSerialGC", "-Xshare:off", "-XX:SoftRefLRUPolicyMSPerMB=1000000"}, {});
    require(jvm.ready(), "Shapes did not start");
    std::string file = dir.file("shapes.hprof");
    auto r = jvm.jcmd({"GC.heap_dump", file});
    require(r.exit_code == 0, "jcmd GC.heap_dump failed: " + r.out + r.err);
    return file;
}

// A dump of Shapes, analyzed in process as `heapd analyze` does it, with the shapes' objects named.
struct shapes_heap {
    test::scratch_dir dir;
    std::string path = dump_shapes(dir);
    dump_file file = dump_file::open(path).value();
    hprof_reader reader = hprof_reader::parse(file.bytes()).value();
    record_index idx = record_index::build(reader);
    class_table classes{idx};
    census_result census = run_census();
    object_graph graph = object_graph::build(idx, classes, census).value();
    dominator_tree dom = dominator_tree::compute(graph);
    std::map<std::string, std::uint32_t> statics = shapes_statics();  // static field name -> node
    std::uint32_t shapes_class = node(classes.find_by_name("Shapes")->id());

    census_result run_census() {
        heap_census c(idx, classes, 0);
        walk_heap(idx, c);
        return c.finish();
    }
    std::uint32_t node(std::uint64_t id) const {
        std::uint32_t n = graph.node_of(id);
        require(n != none, "no object " + std::to_string(id));
        return n;
    }
    std::map<std::string, std::uint32_t> shapes_statics() const {
        const class_info* c = classes.find_by_name("Shapes");
        require(c != nullptr, "no class Shapes in the dump");
        std::map<std::string, std::uint32_t> out;
        c->dump.for_each_static([&](const class_dump_view::static_field& s) {
            if (s.type == 2)
                out[std::string(idx.utf8(s.name_id))] = graph.node_of(be::id(s.value.data(), idx.id_size()));
        });
        return out;
    }
    std::uint32_t at(const std::string& static_name) const {
        require(statics.count(static_name) && statics.at(static_name) != none,
                "Shapes." + static_name + " is not in the dump");
        return statics.at(static_name);
    }
    const std::string& class_of(std::uint32_t n) const { return graph.key_name(graph.class_key(n)); }
    // The references of n to objects of the named class, in field (or element) order.
    std::vector<std::uint32_t> refs(std::uint32_t n, const std::string& class_name) const {
        std::vector<std::uint32_t> out;
        for (std::uint32_t w : graph.references(n))
            if (w != none && class_of(w) == class_name) out.push_back(w);
        return out;
    }
    std::uint32_t ref(std::uint32_t n, const std::string& class_name) const {
        auto r = refs(n, class_name);
        require(r.size() == 1, class_of(n) + " " + std::to_string(graph.id(n)) + " holds " + std::to_string(r.size()) +
                                   " " + class_name + ", not one");
        return r[0];
    }
    // A reference field read from the dump by name (the graph leaves out Reference.referent); 0 for null.
    std::uint64_t field(std::uint32_t n, std::string_view name) const {
        const std::uint64_t id = graph.id(n);
        object_locator found(idx, std::span(&id, 1));
        const located_object* o = found.find(id);
        require(o != nullptr && o->tag == 0x21, "not an instance: " + std::to_string(id));
        auto slot = classes.find_field(o->instance.class_id, name);
        require(slot && slot->type == 2 && slot->offset + idx.id_size() <= o->instance.data.size(),
                "no reference field " + std::string(name));
        return be::id(o->instance.data.data() + slot->offset, idx.id_size());
    }
    std::uint64_t shallow(std::uint32_t n) const { return graph.shallow_size(n); }
    std::uint64_t retained(std::uint32_t n) const { return dom.retained(n); }
    // The nodes of n's subtree in the dominator tree, n first.
    std::vector<std::uint32_t> dominated_by(std::uint32_t n) const {
        const auto children = dom.children();
        std::vector<std::uint32_t> out, work = {n};
        while (!work.empty()) {
            std::uint32_t v = work.back();
            work.pop_back();
            out.push_back(v);
            for (std::uint64_t i = children.begin[v]; i < children.begin[v + 1]; ++i) work.push_back(children.nodes[i]);
        }
        return out;
    }
};

nlohmann::json analyze(const std::string& file) {
    auto r = test::run_command(
        {test::heapd_binary(), "analyze", "--json", "--no-threads", "--top", std::to_string(top_n), file});
    require(r.exit_code == 0, "heapd analyze failed: " + r.err);
    return nlohmann::json::parse(r.out);
}

// What VisualVM's library says of one object.
struct vv_object {
    std::uint64_t id = 0, retained = 0, shallow = 0;
    std::string class_name;
};

// VisualVM's top objects by retained size, and every object (instances and class objects).
struct vv_report {
    std::vector<vv_object> top;
    std::unordered_map<std::uint64_t, vv_object> all;
};

vv_report visualvm(const std::string& file) {
    auto r = test::run_command({"java", "-Xmx1g", "-cp", test::test_classes_dir() + ":" + test::visualvm_heap_jar(),
                                "RetainedSizes", file, std::to_string(top_n), "--all"});
    require(r.exit_code == 0, "RetainedSizes failed: " + r.err);
    vv_report out;
    out.all.reserve(1 << 21);
    std::istringstream in(r.out);
    bool after_top = false;
    for (std::string word; in >> word;) {
        if (word == "--") {
            after_top = true;
            continue;
        }
        vv_object o{std::stoull(word), 0, 0, {}};
        require(static_cast<bool>(in >> o.retained >> o.shallow >> o.class_name),
                "bad RetainedSizes output at " + word);
        if (after_top)
            out.all.emplace(o.id, std::move(o));
        else
            out.top.push_back(std::move(o));
    }
    require(out.top.size() == top_n && !out.all.empty(), "RetainedSizes printed too little");
    return out;
}

// What each shape keeps alive follows from the shallow sizes of its objects, whatever the layout;
// the literal figures are those of a 64-bit JVM with compressed oops (the default with -Xmx256m).
TEST(retention, shapes_retain_what_they_hold) {
    auto heap = std::make_unique<shapes_heap>();
    const shapes_heap& h = *heap;
    const nlohmann::json report = analyze(h.path);

    // A chain of a million nodes: each node keeps the rest of the chain.
    std::uint32_t node = h.at("CHAIN");
    const std::uint64_t node_size = h.shallow(node);
    EXPECT_EQ(node_size, 24u);
    EXPECT_EQ(h.retained(node), 1'000'000 * node_size);
    std::uint64_t length = 0;
    while (node != none) {
        ++length;
        const auto rest = h.refs(node, "Shapes$Node");
        const std::uint32_t next = rest.empty() ? none : rest[0];
        const std::uint64_t expect = h.shallow(node) + (next == none ? 0 : h.retained(next));
        if (h.retained(node) != expect || (next != none && h.dom.idom(next) != node)) {
            ADD_FAILURE() << "chain node " << length << " retains " << h.retained(node) << ", expected " << expect;
            break;
        }
        node = next;
    }
    EXPECT_EQ(length, 1'000'000u);

    // A ring of 1000 entered at RING: the first member dominates the others, each the rest.
    const std::uint32_t first = h.at("RING");
    EXPECT_EQ(h.retained(first), 1000 * h.shallow(first));
    EXPECT_EQ(h.retained(first), 24'000u);
    std::uint32_t member = first;
    for (unsigned i = 0; i < 1000; ++i) {
        EXPECT_EQ(h.retained(member), (1000 - i) * h.shallow(member)) << "ring member " << i;
        const std::uint32_t next = h.ref(member, "Shapes$RingNode");
        EXPECT_EQ(i < 999 ? h.dom.idom(next) : next, i < 999 ? member : first) << "ring member " << i + 1;
        member = next;  // and the last member's next is the first: the ring closes
    }

    // The leak: an ArrayList of 20,000 sessions, each keeping its payload and its id.
    const std::uint32_t leak = h.at("LEAK");
    const std::uint32_t elements = h.ref(leak, "java.lang.Object[]");
    const auto sessions = h.refs(elements, "Shapes$Session");
    ASSERT_EQ(sessions.size(), 20'000u);
    std::uint64_t all_sessions = 0;
    for (std::uint32_t s : sessions) {
        const std::uint32_t id = h.ref(s, "java.lang.String");
        const std::uint64_t expect =
            h.shallow(s) + h.shallow(h.ref(s, "byte[]")) + h.shallow(id) + h.shallow(h.ref(id, "byte[]"));
        EXPECT_EQ(h.retained(s), expect) << "session " << h.graph.id(s);
        EXPECT_EQ(h.dom.idom(s), elements);
        all_sessions += h.retained(s);
    }
    EXPECT_EQ(h.retained(sessions[0]), 608u);  // 24 + byte[512] 528 + String 24 + byte[9..13] 32
    EXPECT_EQ(h.retained(elements), h.shallow(elements) + all_sessions);
    EXPECT_EQ(h.retained(leak), h.shallow(leak) + h.retained(elements));
    EXPECT_EQ(h.retained(leak), 12'244'360u);  // elementData of 21,080 slots: 16 + 4 × 21,080 + 20,000 × 608, + 24

    // Two maps sharing their 1000 values: each map keeps its table, nodes and keys, neither the values.
    std::set<std::uint32_t> values_seen;
    for (const char* name : {"SHARED_A", "SHARED_B"}) {
        const std::uint32_t map = h.at(name);
        const std::uint32_t table = h.ref(map, "java.util.HashMap$Node[]");
        std::uint64_t expect = h.shallow(map) + h.shallow(table);
        std::vector<std::uint32_t> nodes = h.refs(table, "java.util.HashMap$Node");
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            const std::uint32_t n = nodes[i];
            for (std::uint32_t chained : h.refs(n, "java.util.HashMap$Node"))
                nodes.push_back(chained);  // a bucket's list
            expect += h.shallow(n) + h.retained(h.ref(n, "java.lang.String"));
            const std::uint32_t value = h.ref(n, "byte[]");
            EXPECT_EQ(h.dom.idom(value), h.shapes_class) << name << ": a shared value is retained below class Shapes";
            values_seen.insert(value);
        }
        EXPECT_EQ(nodes.size(), 1000u) << name;
        EXPECT_EQ(h.retained(map), expect) << name;
        EXPECT_EQ(h.retained(map), 88'256u) << name;  // 48 + table 16 + 4 × 2048 + 1000 × (node 32 + key 24 + 24)
    }
    EXPECT_EQ(values_seen.size(), 1000u);  // the same 1000 arrays in both maps

    // A weak reference keeps nothing; an array it shares with a strong holder is the holder's.
    const std::uint32_t held = h.at("HELD"), weak_to_held = h.at("WEAK_TO_HELD");
    EXPECT_EQ(h.field(weak_to_held, "referent"), h.graph.id(held));
    EXPECT_EQ(h.retained(weak_to_held), h.shallow(weak_to_held));
    EXPECT_EQ(h.dom.idom(held), h.shapes_class);
    const std::uint32_t holder = h.at("HOLDER"), holder_data = h.ref(holder, "byte[]");
    EXPECT_EQ(h.field(h.at("WEAK_TO_HOLDER_DATA"), "referent"), h.graph.id(holder_data));
    EXPECT_EQ(h.retained(holder), h.shallow(holder) + h.shallow(holder_data));
    EXPECT_EQ(h.retained(h.at("WEAK_TO_HOLDER_DATA")), h.shallow(h.at("WEAK_TO_HOLDER_DATA")));
    // WEAK's array was only weakly reachable: the dump's full GC cleared it.
    EXPECT_EQ(h.field(h.at("WEAK"), "referent"), 0u);

    // Softly reachable objects survive the GC but are unreachable: SOFT's array, and the holder
    // SOFT_TO_HOLDER points to, which shares its array with BESIDE_SOFT.
    const std::uint32_t soft_array = h.node(h.field(h.at("SOFT"), "referent"));
    const std::uint32_t soft_holder = h.node(h.field(h.at("SOFT_TO_HOLDER"), "referent"));
    EXPECT_FALSE(h.dom.reachable(soft_array));
    EXPECT_FALSE(h.dom.reachable(soft_holder));
    EXPECT_EQ(h.shallow(soft_array), 100'016u);
    EXPECT_EQ(h.retained(h.at("SOFT")), h.shallow(h.at("SOFT")));
    const std::uint32_t beside_soft = h.at("BESIDE_SOFT");
    EXPECT_EQ(h.ref(soft_holder, "byte[]"), h.ref(beside_soft, "byte[]"));
    EXPECT_EQ(h.retained(beside_soft), h.shallow(beside_soft) + h.shallow(h.ref(beside_soft, "byte[]")));

    // The report: reachability counts every node once, the unreachable ones included.
    std::uint64_t unreachable = 0, unreachable_bytes = 0;
    for (std::uint32_t v = 0; v < h.graph.size(); ++v)
        if (!h.dom.reachable(v)) ++unreachable, unreachable_bytes += h.shallow(v);
    const auto& reach = report.at("reachability");
    EXPECT_EQ(reach.at("unreachable_objects").get<std::uint64_t>(), unreachable);
    EXPECT_EQ(reach.at("unreachable_bytes").get<std::uint64_t>(), unreachable_bytes);
    EXPECT_EQ(reach.at("reachable_objects").get<std::uint64_t>() + unreachable, h.graph.size());
    EXPECT_GE(unreachable_bytes, h.shallow(soft_array) + h.shallow(soft_holder));

    // Its dominators are those of the graph built here; class objects are named "class NAME".
    const retention_report mine = summarize_retention(h.graph, h.dom, h.dom.children(), h.classes, top_n, top_n);
    const auto& dominators = report.at("dominators");
    ASSERT_EQ(dominators.size(), mine.dominators.size());
    for (std::size_t i = 0; i < mine.dominators.size(); ++i) {
        EXPECT_EQ(dominators[i].at("id").get<std::uint64_t>(), mine.dominators[i].id) << i;
        EXPECT_EQ(dominators[i].at("class").get<std::string>(), mine.dominators[i].class_name) << i;
        EXPECT_EQ(dominators[i].at("retained_bytes").get<std::uint64_t>(), mine.dominators[i].retained_bytes) << i;
    }
    ASSERT_FALSE(dominators.empty());
    EXPECT_EQ(dominators[0].at("id").get<std::uint64_t>(), h.graph.id(h.shapes_class));
    EXPECT_EQ(dominators[0].at("class"), "class Shapes");
    EXPECT_EQ(dominators[1].at("id").get<std::uint64_t>(), h.graph.id(h.at("CHAIN")));

    // Retention by class counts nested instances once: the whole chain is what its head retains.
    std::map<std::string, std::uint64_t> by_class;
    for (const auto& c : report.at("retained_by_class"))
        by_class[c.at("class").get<std::string>()] = c.at("retained_bytes").get<std::uint64_t>();
    EXPECT_EQ(by_class["Shapes$Node"], h.retained(h.at("CHAIN")));
    EXPECT_EQ(by_class["Shapes$RingNode"], h.retained(first));
    EXPECT_EQ(by_class["Shapes$Session"], all_sessions);
    EXPECT_EQ(by_class["Shapes$Holder"], h.retained(holder) + h.retained(beside_soft));
}

// VisualVM's heap library computes dominators its own way (an iterative intersection of the
// referrers' dominators). Where both see the same graph the figures must agree to the byte. They
// differ on purpose where VisualVM's model of the heap is not HotSpot's, each difference asserted
// exactly below:
// - Shallow sizes: VisualVM estimates them from the fields the dump lists. It gives every class
//   object (java.lang.Class) 72 bytes; ours are HotSpot's (checked against jcmd GC.class_histogram
//   in analyze_command_test). It misses the fields HotSpot injects into a few JDK classes and the
//   @Contended padding of Thread, so those instances are smaller in its view.
// - Class objects: VisualVM never adds a class object's size to any retained size, its own
//   included; ours count them like any object.
// - Reference.referent keeps nothing alive for either, but VisualVM still counts a Reference as a
//   referrer when it intersects dominators: an array held by HOLDER and by a WeakReference is, in
//   its view, dominated by class Shapes (above both), not by HOLDER. When HOLDER goes the array
//   goes, so ours keeps it under HOLDER.
// - A referrer that is itself unreachable (the softly reachable holder SOFT_TO_HOLDER points to)
//   makes VisualVM hang the referred object at the top of its tree; ours ignores garbage, so the
//   array BESIDE_SOFT shares with it stays under BESIDE_SOFT, and so under class Shapes.
TEST(retention, matches_visualvm_object_for_object) {
    auto heap = std::make_unique<shapes_heap>();
    const shapes_heap& h = *heap;
    const nlohmann::json report = analyze(h.path);
    const vv_report vv = visualvm(h.path);
    auto vv_of = [&](std::uint32_t n) -> const vv_object& {
        auto it = vv.all.find(h.graph.id(n));
        require(it != vv.all.end(), "VisualVM does not list " + std::to_string(h.graph.id(n)));
        return it->second;
    };
    const std::uint32_t holder = h.at("HOLDER"), beside_soft = h.at("BESIDE_SOFT");
    const std::uint64_t holder_data = h.shallow(h.ref(holder, "byte[]"));
    const std::uint64_t beside_soft_data = h.shallow(h.ref(beside_soft, "byte[]"));

    // Class Shapes: VisualVM leaves out its own size and the array it shares with garbage.
    const vv_object& shapes = vv_of(h.shapes_class);
    EXPECT_EQ(h.retained(h.shapes_class), shapes.retained + h.shallow(h.shapes_class) + beside_soft_data);
    EXPECT_EQ(shapes.shallow, 72u);
    EXPECT_NE(h.shallow(h.shapes_class), 72u);  // a mirror with 13 static references is bigger

    // Everything class Shapes dominates for us: a million objects, the same to the byte, but for
    // the two holders whose arrays VisualVM hangs elsewhere.
    std::size_t compared = 0, differing = 0;
    std::string first_differences;
    for (std::uint32_t n : h.dominated_by(h.shapes_class)) {
        if (n == h.shapes_class) continue;
        const vv_object& o = vv_of(n);
        std::uint64_t expect = h.retained(n);
        if (n == holder) expect -= holder_data;
        if (n == beside_soft) expect -= beside_soft_data;
        ++compared;
        if (o.retained != expect || o.shallow != h.shallow(n)) {
            if (++differing <= 10)
                first_differences += h.class_of(n) + " " + std::to_string(h.graph.id(n)) + ": retained " +
                                     std::to_string(h.retained(n)) + " (VisualVM " + std::to_string(o.retained) +
                                     "), shallow " + std::to_string(h.shallow(n)) + " (VisualVM " +
                                     std::to_string(o.shallow) + ")\n";
        }
    }
    EXPECT_GE(compared, 1'080'000u);
    EXPECT_EQ(differing, 0u) << first_differences;
    EXPECT_EQ(vv_of(holder).retained, h.shallow(holder));
    EXPECT_EQ(vv_of(beside_soft).retained, h.shallow(beside_soft));

    // The top objects by retained size: class Shapes, then the head of the chain and its next
    // nodes. Ties at the boundary may be ordered differently, so only figures above it must match.
    const auto& dominators = report.at("dominators");
    ASSERT_EQ(dominators.size(), top_n);
    const std::uint64_t boundary = dominators.back().at("retained_bytes").get<std::uint64_t>();
    std::map<std::uint64_t, std::uint64_t> vv_top;  // id -> retained
    for (const vv_object& o : vv.top) vv_top[o.id] = o.retained;
    std::set<std::uint64_t> our_top;
    for (const auto& d : dominators) {
        const std::uint64_t id = d.at("id"), retained = d.at("retained_bytes");
        our_top.insert(id);
        if (retained == boundary) continue;
        ASSERT_TRUE(vv_top.count(id)) << d.dump() << " is not in VisualVM's top " << top_n;
        if (id == h.graph.id(h.shapes_class)) continue;  // the class, as above
        EXPECT_FALSE(d.at("class").get<std::string>().starts_with("class ")) << d.dump();
        EXPECT_EQ(vv_top[id], retained) << d.dump();
    }
    for (const vv_object& o : vv.top) {
        if (o.retained > boundary) {
            EXPECT_TRUE(our_top.count(o.id)) << o.id << " " << o.class_name << " " << o.retained;
        }
    }
    EXPECT_EQ(dominators[0].at("id").get<std::uint64_t>(), h.graph.id(h.shapes_class));
    EXPECT_EQ(vv.top[0].id, h.graph.id(h.shapes_class));

    // Reachability: an instance VisualVM reaches (it counts its size) is one we reach, and the
    // converse; VisualVM gives class objects no size, so they are left out.
    std::size_t instances = 0, disagreeing = 0;
    std::string disagreements;
    for (const auto& [id, o] : vv.all) {
        if (h.classes.find(id) != nullptr) continue;
        ++instances;
        const std::uint32_t n = h.graph.node_of(id);
        if (n == none || h.dom.reachable(n) != (o.retained > 0)) {
            if (++disagreeing <= 10) disagreements += o.class_name + " " + std::to_string(id) + "\n";
        }
    }
    EXPECT_EQ(disagreeing, 0u) << disagreements;
    EXPECT_EQ(instances + h.classes.size(), h.graph.size());

    // Shallow sizes of instances differ only for the classes HotSpot adds fields to that the
    // dump does not list (JDK 17: Class, ClassLoader, Module, MemberName, ResolvedMethodName,
    // CallSiteContext) and for Thread's @Contended padding; by the same amount for every instance.
    const std::set<std::string> injected = {"java.lang.Class", "java.lang.Module", "java.lang.invoke.MemberName",
                                            "java.lang.invoke.ResolvedMethodName",
                                            "java.lang.invoke.MethodHandleNatives$CallSiteContext"};
    std::map<std::string, std::set<std::int64_t>> shallow_differences;  // class -> ours - VisualVM
    for (const auto& [id, o] : vv.all) {
        const std::uint32_t n = h.graph.node_of(id);
        if (n == none || h.classes.find(id) != nullptr || h.shallow(n) == o.shallow) continue;
        shallow_differences[o.class_name].insert(static_cast<std::int64_t>(h.shallow(n)) -
                                                 static_cast<std::int64_t>(o.shallow));
    }
    EXPECT_FALSE(shallow_differences.empty());  // Thread and Module are always there
    for (const auto& [name, deltas] : shallow_differences) {
        const class_info* c = h.classes.find_by_name(name);
        ASSERT_NE(c, nullptr) << name;
        EXPECT_TRUE(injected.count(name) || h.classes.is_a(c->id(), "java.lang.ClassLoader") ||
                    h.classes.is_a(c->id(), "java.lang.Thread"))
            << name;
        ASSERT_EQ(deltas.size(), 1u) << name;
        EXPECT_GT(*deltas.begin(), 0) << name;
    }
}

// The benchmarks' generated dump (bench/heap_generator.h): VisualVM's heap library reads it and
// gives each container, and each Holder's list of them, the retained size the generator counted
// (heap_generator_test checks heapd's).
TEST(retention, visualvm_agrees_with_the_benchmark_generator) {
    test::scratch_dir dir;
    const test::generated_dump dump = test::generate_dump(dir.path() + "/generated.hprof", "16M", 8192);
    std::vector<test::generated_dump::container> all = dump.containers;
    all.insert(all.end(), dump.holders.begin(), dump.holders.end());
    std::string ids;
    for (const auto& c : all) ids += (ids.empty() ? "" : ",") + std::to_string(c.id);
    auto r = test::run_command({"java", "-Xmx1g", "-cp", test::test_classes_dir() + ":" + test::visualvm_heap_jar(),
                                "RetainedSizes", dump.path, "1", "--ids", ids});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::map<std::uint64_t, std::uint64_t> retained;  // id -> VisualVM's retained size
    std::istringstream in(r.out.substr(r.out.find("--\n") + 3));
    std::uint64_t id = 0, bytes = 0, shallow = 0;
    for (std::string class_name; in >> id >> bytes >> shallow >> class_name;) retained[id] = bytes;
    ASSERT_EQ(retained.size(), all.size()) << r.out;
    EXPECT_GE(all.size(), 32u);
    for (const auto& c : all) EXPECT_EQ(retained[c.id], c.retained) << c.kind << " " << c.id;
}

}  // namespace
}  // namespace heapd
