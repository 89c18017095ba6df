#pragma once
// HotSpot object layouts and shallow sizes: headers, array bases, instance field packing, mirrors.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "formats/hprof/class_table.h"
#include "formats/hprof/id_map.h"

namespace heapd {
inline namespace hprof {

// One way a HotSpot VM lays out objects; a dump does not say which, so the census infers it.
struct vm_layout {
    std::string_view name;     // for people: "64-bit, compressed oops"
    unsigned oop_size;         // bytes of a reference field or array element
    unsigned header_size;      // bytes before the first instance field
    unsigned word_size;        // HeapWordSize: 8 on 64-bit, 4 on 32-bit
    unsigned array_base;       // offset of the first element
    unsigned wide_array_base;  // the same for long[] and double[] (aligned to 8 on 32-bit)
    unsigned first_java = 0;   // the first Java release that can lay objects out so (24: compact headers)
};

// The layouts a dump with this identifier size can come from, most common first.
std::span<const vm_layout> candidate_layouts(unsigned id_size);
inline constexpr unsigned max_candidate_layouts = 5;

// Bytes of an array of length elements of the given basic type (2 = references).
inline std::uint64_t array_shallow_size(const vm_layout& l, std::uint8_t elem_type, std::uint32_t length) {
    std::uint64_t elem = elem_type == 2 ? l.oop_size : value_size(elem_type, 8);
    std::uint64_t base = elem == 8 ? l.wide_array_base : l.array_base;
    return (base + elem * length + 7) & ~std::uint64_t{7};
}

// The Java release whose rules lay out fields: injected fields and @Contended change with it, and
// JDK 15 replaced the field layout (gaps filled across the class hierarchy).
struct field_rules {
    unsigned java_feature = newest_known_java;
    static constexpr unsigned newest_known_java = 25;
    bool per_class_layout() const { return java_feature < 15; }  // each class's fields start after its super's
    std::string_view name() const;  // "JDK 8", "JDK 9 to 14", "JDK 15 to 18", "JDK 19 and later"
};

// The Java release a dump's classes look like, for when nothing better tells: the fields of
// java.lang.String (offset and count until 7u6, hash32 in 7u6 to 7u40, coder from 9, hashIsZero from 13),
// then java.lang.Thread's holder (from 19).
struct java_release_guess {
    unsigned java_feature = 0;  // a release with those rules: 6, 7, 8, 11, 17 or 25; 0 if there is no String
    std::string_view releases;  // for people: "6 or older", "19 or later"
};
java_release_guess guess_java_release(const class_table& classes);

// Computes instance and mirror sizes of a dump's classes under one layout, memoized per class.
class layout_model {
public:
    layout_model(const class_table& classes, const vm_layout& layout, field_rules rules = {})
        : classes_(&classes), layout_(layout), rules_(rules) {}

    const vm_layout& layout() const { return layout_; }
    const field_rules& rules() const { return rules_; }
    // Shallow size of an instance of class_id: header, fields of the class and its supers packed
    // as HotSpot of that release packs them, plus the fields the VM injects, aligned to 8.
    std::uint32_t instance_size(std::uint64_t class_id);
    // Shallow size of the java.lang.Class object (mirror) of class_id: a Class instance followed by
    // the class's static fields (from JDK 7). class_object_size is the size of a plain Class instance.
    std::uint32_t mirror_size(std::uint64_t class_id, std::uint32_t class_object_size) const;

    // A laid-out class: where its last field ends and the holes its subclasses may fill.
    struct shape {
        std::uint32_t end = 0;
        std::vector<std::pair<std::uint32_t, std::uint32_t>> holes;  // (offset, size)
        bool known = false;
        bool contended = false;  // this class or a super uses @Contended
    };

private:
    const shape& shape_of(std::uint64_t class_id);

    const class_table* classes_;
    vm_layout layout_;
    field_rules rules_;
    id_map<std::uint32_t> shape_index_;
    std::vector<shape> shapes_;
};

}  // namespace hprof
}  // namespace heapd
