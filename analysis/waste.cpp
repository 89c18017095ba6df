#include "analysis/waste.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/duplicate_strings.h"
#include "analysis/radix_sort.h"
#include "formats/hprof/heap_walk.h"
#include "formats/hprof/java_names.h"

namespace heapd {
inline namespace analysis {
namespace {

// The box classes, in the order the report lists them when their savings tie.
constexpr std::array<std::string_view, 8> box_names = {"java.lang.Integer", "java.lang.Long",      "java.lang.Short",
                                                       "java.lang.Byte",    "java.lang.Character", "java.lang.Boolean",
                                                       "java.lang.Float",   "java.lang.Double"};
// The type of each box's value field.
constexpr std::array<std::uint8_t, 8> box_types = {10, 11, 9, 8, 5, 4, 6, 7};

// What instances of a class are to the waste pass.
enum class shape : std::uint8_t { other, string, hash_map, array_list, concurrent_map, boxed };

// How the first walk reads instances of one class: which fields, and where its counts go.
struct class_plan {
    shape kind = shape::other;
    std::uint32_t group = 0;  // collections: index into collection rows; boxed: index into box_names
    std::uint32_t size = 0;   // shallow bytes of one instance
    field_slot a{}, b{};      // string: value, coder; collections: backing array, size; boxed: value
    bool has_b = false;
    field_slot offset{}, count{};  // string with a range of its array (JDK 6 and older)
    bool has_range = false;
};

// A collection: its row, its size and its backing array's id (0 when null).
struct collection_rec {
    std::uint32_t group;
    std::uint64_t table;
    std::uint64_t size;
};

// An object array, which may back a collection: its length and non-null elements.
struct table_rec {
    std::uint64_t id;
    std::uint32_t length = 0;
    std::uint32_t occupied = 0;
};

// Per collection class.
struct collection_row {
    std::uint64_t class_id;
    shape kind;
    std::uint64_t count = 0, empty = 0, sparse = 0, saving = 0;
};

// Per box class: the values seen, sorted and made unique whenever they pile up (appending and
// sorting is several times faster than a hash set of millions of values, and holds less).
struct box_row {
    std::uint64_t count = 0, bytes = 0;
    std::vector<std::uint64_t> values;
    std::size_t compact_at = std::size_t{1} << 20;

    void add(std::uint64_t v) {
        values.push_back(v);
        if (values.size() >= compact_at) {
            compact();
            compact_at = std::max(compact_at, 2 * values.size());
        }
    }
    void compact() {
        radix_sort(values, [](std::uint64_t x) { return x; });
        values.erase(std::unique(values.begin(), values.end()), values.end());
    }
};

// The slot of a field that the class named declaring declares, in instances of class_id (one of
// its subclasses, whose own fields of the same name do not hide it).
std::optional<field_slot> inherited_field(const class_table& classes, std::uint64_t class_id,
                                          std::string_view declaring, std::string_view name, unsigned id_size) {
    std::uint32_t base = 0;
    const class_info* c = classes.find(class_id);
    for (int depth = 0; c != nullptr && depth < 4096; ++depth) {
        if (same_class_name(c->raw_name, declaring)) {
            auto s = classes.find_field(c->id(), name);
            if (s) s->offset += base;
            return s;
        }
        c->dump.for_each_field([&](const class_dump_view::field& f) { base += value_size(f.type, id_size); });
        c = classes.find(c->super_id());
    }
    return std::nullopt;
}

std::optional<std::uint64_t> read_slot(const instance_view& v, field_slot s, unsigned id_size) {
    unsigned size = value_size(s.type, id_size);
    if (size == 0 || std::size_t{s.offset} + size > v.data.size()) return std::nullopt;
    const std::byte* p = v.data.data() + s.offset;
    switch (size) {
    case 1: return be::u1(p);
    case 2: return be::u2(p);
    case 4: return be::u4(p);
    default: return be::u8(p);
    }
}

// The one walk: Strings, collections and boxes, by plans made once per class; the arrays that may
// be their values and tables (joined to them by id afterwards, wherever they lie in the dump); zeros
// in every other primitive array.
struct waste_pass : heap_visitor {
    const class_table* classes;
    const census_result* census;
    unsigned id_size;
    std::vector<class_plan> plans;
    id_map<std::uint32_t> plan_of;
    std::uint64_t last_class = ~std::uint64_t{0};
    std::uint32_t last_plan = 0;
    duplicate_strings* strings;
    big_vector<collection_rec> collections;
    big_vector<table_rec> tables;
    std::vector<collection_row> rows;
    std::array<box_row, box_names.size()> boxes;
    bool stripped = false;  // arrays of zeros are not counted: the dump was stripped
    std::array<std::pair<std::uint64_t, std::uint64_t>, 12> zeros{};  // per type: count, bytes

    class_plan make_plan(std::uint64_t class_id) {
        class_plan p;
        const class_info* c = classes->find(class_id);
        if (c == nullptr) return p;
        const std::uint32_t* size = census->instance_sizes.find(class_id);
        p.size = size ? *size : 0;
        auto typed = [](std::optional<field_slot> s, std::uint8_t type) {
            return s && s->type == type ? s : std::nullopt;
        };
        auto slot = [&](std::string_view name, std::uint8_t type) {
            return typed(classes->find_field(class_id, name), type);
        };
        auto collection = [&](shape kind, std::string_view base, std::string_view array_field,
                              std::string_view size_field) {
            auto a = typed(inherited_field(*classes, class_id, base, array_field, id_size), 2);
            auto b = typed(inherited_field(*classes, class_id, base, size_field, id_size),
                           kind == shape::concurrent_map ? 11 : 10);
            if (!a || !b) return;
            p.kind = kind;
            p.a = *a;
            p.b = *b;
            p.group = static_cast<std::uint32_t>(rows.size());
            rows.push_back({class_id, kind});
        };
        if (same_class_name(c->raw_name, "java.lang.String")) {
            auto value = slot("value", 2);
            if (!value) return p;
            // JDK 6 and older: the characters are count from offset (Android's count alone is the length).
            if (classes->find_field(class_id, "offset")) {
                auto offset = slot("offset", 10), count = slot("count", 10);
                if (!offset || !count) return p;  // a shape of String not known: left out
                p.offset = *offset;
                p.count = *count;
                p.has_range = true;
            }
            p.kind = shape::string;
            p.a = *value;
            if (auto coder = slot("coder", 8)) {
                p.b = *coder;
                p.has_b = true;
            }
            return p;
        }
        for (std::uint32_t i = 0; i < box_names.size(); ++i) {
            if (!same_class_name(c->raw_name, box_names[i])) continue;
            if (auto value = slot("value", box_types[i])) {
                p.kind = shape::boxed;
                p.group = i;
                p.a = *value;
            }
            return p;
        }
        constexpr std::string_view chm = "java.util.concurrent.ConcurrentHashMap", hash_map = "java.util.HashMap",
                                   array_list = "java.util.ArrayList";
        if (classes->is_a(class_id, chm))
            collection(shape::concurrent_map, chm, "table", "baseCount");
        else if (classes->is_a(class_id, hash_map))
            collection(shape::hash_map, hash_map, "table", "size");
        else if (classes->is_a(class_id, array_list))
            collection(shape::array_list, array_list, "elementData", "size");
        return p;
    }

    const class_plan& plan_for(std::uint64_t class_id) {
        if (class_id != last_class || plans.empty()) {
            auto [slot, inserted] = plan_of.insert(class_id, static_cast<std::uint32_t>(plans.size()));
            if (inserted) plans.push_back(make_plan(class_id));
            last_class = class_id;
            last_plan = *slot;
        }
        return plans[last_plan];
    }

    void instance(const instance_view& v) {
        const class_plan& p = plan_for(v.class_id);
        if (p.kind == shape::other) return;
        auto a = read_slot(v, p.a, id_size);
        if (!a) return;
        switch (p.kind) {
        case shape::string: {
            std::uint8_t coder = 0;
            if (p.has_b) {
                auto c = read_slot(v, p.b, id_size);
                if (!c) return;
                coder = static_cast<std::uint8_t>(*c);
            }
            if (p.has_range) {
                auto offset = read_slot(v, p.offset, id_size), count = read_slot(v, p.count, id_size);
                if (!offset || !count) return;
                strings->add_string(*a, coder, p.size, static_cast<std::uint32_t>(*offset),
                                    static_cast<std::uint32_t>(*count));
            } else {
                strings->add_string(*a, coder, p.size);
            }
            return;
        }
        case shape::boxed: {
            box_row& row = boxes[p.group];
            ++row.count;
            row.bytes += p.size;
            row.add(*a);
            return;
        }
        default: {
            auto size = read_slot(v, p.b, id_size);
            if (!size) return;
            // size is an int, baseCount a long; both are signed in Java.
            std::int64_t n =
                p.kind == shape::concurrent_map ? static_cast<std::int64_t>(*size) : static_cast<std::int32_t>(*size);
            collections.push_back({p.group, *a, static_cast<std::uint64_t>(std::max<std::int64_t>(n, 0))});
            return;
        }
        }
    }
    void object_array(const object_array_view& v) {
        table_rec t{v.id, v.length, 0};
        for (std::uint32_t e = 0; e < v.length; ++e) t.occupied += v.element(e) != 0;
        tables.push_back(t);
    }
    void primitive_array(const primitive_array_view& v) {
        const bool zero = !stripped && v.length > 0 && all_zero(v.data);
        strings->add_array(v, zero);
        if (zero) {
            ++zeros[v.type].first;
            zeros[v.type].second += array_shallow_size(*census->vm, v.type, v.length);
        }
    }
};

std::uint64_t needed_slots(shape kind, std::uint64_t size) {
    if (kind == shape::array_list) return size;
    return std::bit_ceil(std::max<std::uint64_t>((4 * size + 2) / 3, 1));
}

// Joins each collection to its backing array by id (both sorted by it; the first array of an id
// in the dump holds it), and counts the empty and sparse ones per row.
void find_collection_waste(waste_pass& o, const class_table& classes, const vm_layout& vm, waste_report& r) {
    radix_sort(o.collections, [](const collection_rec& c) { return c.table; });
    radix_sort(o.tables, [](const table_rec& t) { return t.id; });
    std::size_t at = 0;
    for (const collection_rec& c : o.collections) {
        collection_row& row = o.rows[c.group];
        ++row.count;
        if (c.table == 0) continue;
        while (at < o.tables.size() && o.tables[at].id < c.table) ++at;
        if (at == o.tables.size() || o.tables[at].id != c.table) continue;
        const table_rec& t = o.tables[at];
        std::uint64_t size = row.kind == shape::concurrent_map ? std::max<std::uint64_t>(c.size, t.occupied) : c.size;
        std::uint64_t bytes = array_shallow_size(vm, 2, t.length);
        if (size == 0) {
            if (t.length == 0) continue;
            ++row.empty;
            row.saving += bytes;
        } else if (4 * size < t.length) {
            ++row.sparse;
            std::uint64_t need = needed_slots(row.kind, size);
            if (need < t.length) row.saving += bytes - array_shallow_size(vm, 2, static_cast<std::uint32_t>(need));
        }
    }
    // One row per class name (classes of the same name from different loaders together).
    std::map<std::string, collection_waste_entry> by_name;
    for (const collection_row& row : o.rows) {
        std::string name = classes.java_name(row.class_id);
        collection_waste_entry& e = by_name[name];
        e.class_name = name;
        e.count += row.count;
        e.empty += row.empty;
        e.sparse += row.sparse;
        e.saving_bytes += row.saving;
    }
    for (auto& [name, e] : by_name) {
        if (e.count == 0) continue;
        r.collection_saving += e.saving_bytes;
        r.collections.push_back(std::move(e));
    }
    std::stable_sort(r.collections.begin(), r.collections.end(), [](const auto& a, const auto& b) {
        return a.saving_bytes != b.saving_bytes ? a.saving_bytes > b.saving_bytes : a.count > b.count;
    });
}

}  // namespace

waste_report find_waste(const record_index& idx, const class_table& classes, const census_result& census,
                        unsigned top) {
    waste_report r;
    if (census.vm == nullptr) return r;
    duplicate_strings strings;
    waste_pass objects;
    objects.strings = &strings;
    objects.classes = &classes;
    objects.census = &census;
    objects.id_size = idx.id_size();
    objects.stripped = census.stripped.arrays;
    // The census knows how many Strings, boxes and arrays there are: room for them without growing.
    strings.reserve(census.string_instances, census.text_arrays);
    objects.tables.reserve(census.object_arrays);
    walk_heap(idx, objects);
    r.computed = true;

    // A stripped dump's Strings all hold zeros, and so do its arrays: their figures would be nonsense
    // (the summary says the dump is stripped).
    if (!census.stripped.strings) strings.finish(*census.vm, top, r);
    if (!objects.stripped) {
        const auto values = strings.zero_values(*census.vm);
        for (std::size_t t = 0; t < values.size(); ++t) {
            objects.zeros[t].first -= values[t].first;
            objects.zeros[t].second -= values[t].second;
        }
    }
    find_collection_waste(objects, classes, *census.vm, r);
    for (std::size_t i = 0; i < box_names.size(); ++i) {
        box_row& b = objects.boxes[i];
        if (b.count == 0) continue;
        b.compact();
        std::uint64_t distinct = b.values.size();
        std::uint64_t saving = (b.count - distinct) * (b.bytes / b.count);
        r.boxed.push_back({std::string(box_names[i]), b.count, b.bytes, distinct, saving});
        r.boxed_saving += saving;
    }
    std::stable_sort(r.boxed.begin(), r.boxed.end(),
                     [](const auto& a, const auto& b) { return a.saving_bytes > b.saving_bytes; });
    for (std::uint8_t type = 4; type <= 11; ++type) {
        auto [count, bytes] = objects.zeros[type];
        if (count == 0) continue;
        r.zero_arrays.push_back({std::string(primitive_name(type)) + "[]", count, bytes});
        r.zero_array_saving += bytes;
    }
    std::stable_sort(r.zero_arrays.begin(), r.zero_arrays.end(),
                     [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
    r.saving_bytes = r.duplicate_string_saving + r.collection_saving + r.boxed_saving + r.zero_array_saving;
    return r;
}

}  // namespace analysis
}  // namespace heapd
