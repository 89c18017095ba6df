#include "analysis/path_description.h"

#include "formats/hprof/heap_walk.h"

namespace heapd {
inline namespace analysis {
namespace {

// Finds how one object's record refers to a target id: the field name or "[index]".
struct reference_finder : heap_visitor {
    const class_table* classes;
    std::uint64_t target;
    unsigned id_size;
    std::string field;
    bool is_class = false;

    void class_dump(const class_dump_view& c) {
        is_class = true;
        const record_index& idx = classes->index();
        c.for_each_static([&](const class_dump_view::static_field& s) {
            if (field.empty() && s.type == 2 && be::id(s.value.data(), id_size) == target)
                field = "static " + std::string(idx.utf8(s.name_id));
        });
        if (!field.empty()) return;
        if (c.super_id() == target)
            field = "superclass";
        else if (c.loader_id() == target)
            field = "class loader";
        else if (c.signers_id() == target)
            field = "signers";
        else if (c.protection_domain_id() == target)
            field = "protection domain";
    }
    void instance(const instance_view& v) {
        const record_index& idx = classes->index();
        std::uint32_t off = 0;
        const class_info* c = classes->find(v.class_id);
        for (int depth = 0; c != nullptr && depth < 4096 && field.empty(); ++depth) {
            c->dump.for_each_field([&](const class_dump_view::field& f) {
                unsigned size = value_size(f.type, id_size);
                if (field.empty() && f.type == 2 && off + id_size <= v.data.size() &&
                    be::id(v.data.data() + off, id_size) == target)
                    field = std::string(idx.utf8(f.name_id));
                off += size;
            });
            c = classes->find(c->super_id());
        }
        if (field.empty() && v.class_id == target) field = "<class>";
    }
    void object_array(const object_array_view& a) {
        for (std::uint32_t i = 0; i < a.length; ++i)
            if (a.element(i) == target) {
                field = "[" + std::to_string(i) + "]";
                return;
            }
        if (a.class_id == target) field = "<class>";
    }
};

}  // namespace

template <typename Node>
std::string node_name(const basic_object_graph<Node>& g, const class_table& classes, std::type_identity_t<Node> node) {
    if (classes.find(g.id(node)) != nullptr) return "class " + classes.java_name(g.id(node));
    return g.key_name(g.class_key(node));
}

template <typename Node>
gc_path describe_path(const basic_object_graph<Node>& g, const class_table& classes,
                      std::type_identity_t<std::span<const Node>> nodes) {
    gc_path path;
    if (nodes.empty()) return path;
    std::uint32_t kinds = g.root_kinds_of(nodes.front());
    for (unsigned k = 0; k < root_kind_count; ++k)
        if (kinds & (1u << k)) path.root_kinds.emplace_back(root_kind_name(static_cast<root_kind>(k)));
    path.length = nodes.size() - 1;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        Node u = nodes[i];
        path_step step{g.id(u), node_name(g, classes, u), classes.find(g.id(u)) != nullptr, "", 1};
        if (i + 1 < nodes.size()) {
            reference_finder f;
            f.classes = &classes;
            f.target = g.id(nodes[i + 1]);
            f.id_size = classes.index().id_size();
            if (!visit_record_at(classes.index(), g.record_offset(u), f) || f.field.empty()) f.field = "?";
            step.field = std::move(f.field);
        }
        // A chain: the same class through the same field as the step before (array indices differ,
        // so arrays never fold).
        if (!path.steps.empty() && i + 1 < nodes.size()) {
            path_step& last = path.steps.back();
            if (last.class_name == step.class_name && last.field == step.field && !last.is_class) {
                ++last.repeat;
                continue;
            }
        }
        path.steps.push_back(std::move(step));
    }
    return path;
}

template std::string node_name(const object_graph&, const class_table&, std::uint32_t);
template std::string node_name(const wide_object_graph&, const class_table&, std::uint64_t);
template gc_path describe_path(const object_graph&, const class_table&, std::span<const std::uint32_t>);
template gc_path describe_path(const wide_object_graph&, const class_table&, std::span<const std::uint64_t>);

}  // namespace analysis
}  // namespace heapd
