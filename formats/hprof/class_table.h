#pragma once
// The dump's classes from CLASS_DUMP records: names, supers, field lists, found by class id.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/hprof/heap_records.h"
#include "formats/hprof/id_map.h"
#include "formats/hprof/record_index.h"

namespace heapd {
inline namespace hprof {

// Deeper superclass chains than this are taken as a cycle in a damaged dump.
inline constexpr std::size_t max_class_depth = 4096;

// One class: its CLASS_DUMP view (fields are decoded from it on demand) and its name.
struct class_info {
    class_dump_view dump;
    std::string_view raw_name;  // as written in LOAD_CLASS, e.g. "java/util/HashMap$Node"
    std::uint64_t id() const { return dump.class_id(); }
    std::uint64_t super_id() const { return dump.super_id(); }
};

// Where an instance field's value sits inside INSTANCE_DUMP data, and its type.
struct field_slot {
    std::uint32_t offset;
    std::uint8_t type;
};

// All classes of a dump, looked up by class object id; holds views, not copies.
class class_table {
public:
    explicit class_table(const record_index& idx) : idx_(&idx) {}

    void add(const class_dump_view& dump);
    const class_info* find(std::uint64_t class_id) const;
    std::size_t size() const { return classes_.size(); }
    const record_index& index() const { return *idx_; }
    const std::vector<class_info>& all() const { return classes_; }

    // The first class whose name (slash or dot form) equals java_name, e.g. "java.lang.String".
    const class_info* find_by_name(std::string_view java_name) const;
    // The slot of the named instance field in instances of class_id (searching up the supers).
    std::optional<field_slot> find_field(std::uint64_t class_id, std::string_view name) const;
    // True when class_id is the named class or one of its subclasses.
    bool is_a(std::uint64_t class_id, std::string_view java_name) const;
    // Source-form name of a class ("java.lang.Object[]"); "<unknown class 0x...>" when absent.
    std::string java_name(std::uint64_t class_id) const;

private:
    const record_index* idx_;
    std::vector<class_info> classes_;
    id_map<std::uint32_t> by_id_;
};

// Adds every CLASS_DUMP of idx's heap dump to classes, in one walk over the heap.
void add_class_dumps(const record_index& idx, class_table& classes);

}  // namespace hprof
}  // namespace heapd
