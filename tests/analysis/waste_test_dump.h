#pragma once
// The synthetic dumps of the waste tests: JDK 17-like String, collection and box classes, builders
// for their objects, and the waste found in a finished dump.
#include "analysis/waste.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "formats/hprof/heap_walk.h"
#include "formats/hprof/hprof_reader.h"
#include "formats/report/report_json.h"
#include "formats/report/report_text.h"
#include "support/hprof_builder.h"
#include "support/row_lookup.h"

namespace heapd::waste_test {

using test::byte_vector;
using test::hprof_builder;
using test::values;

constexpr std::uint8_t t_object = 2, t_boolean = 4, t_char = 5, t_float = 6, t_double = 7, t_byte = 8, t_short = 9,
                       t_int = 10, t_long = 11;

// Class ids of the synthetic dumps.
enum : std::uint64_t {
    object_class = 0x100,
    string_class,
    hash_map_class,
    linked_map_class,
    hash_set_class,
    array_list_class,
    chm_class,
    lru_map_class,
    my_list_class,
    object_array_class,
    integer_class,
    long_class,
    boolean_class,
    character_class,
    double_class,
    short_class,
    byte_class,
    float_class,
};
// UTF8 ids of field names.
enum : std::uint64_t {
    f_value = 0x800,
    f_coder,
    f_hash,
    f_table,
    f_entry_set,
    f_size,
    f_mod_count,
    f_threshold,
    f_load_factor,
    f_head,
    f_tail,
    f_access_order,
    f_map,
    f_element_data,
    f_next_table,
    f_base_count,
    f_size_ctl,
};

// Writes names and LOAD_CLASS records, then opens a segment with the CLASS_DUMPs of a JDK 17-like
// String, HashMap family, ArrayList, ConcurrentHashMap, boxes and Object[].
void declare_classes(hprof_builder& b, bool utf16_strings = true) {
    const std::pair<std::uint64_t, const char*> names[] = {{object_class, "java/lang/Object"},
                                                           {string_class, "java/lang/String"},
                                                           {hash_map_class, "java/util/HashMap"},
                                                           {linked_map_class, "java/util/LinkedHashMap"},
                                                           {hash_set_class, "java/util/HashSet"},
                                                           {array_list_class, "java/util/ArrayList"},
                                                           {chm_class, "java/util/concurrent/ConcurrentHashMap"},
                                                           {lru_map_class, "demo/LruMap"},
                                                           {my_list_class, "demo/MyList"},
                                                           {object_array_class, "[Ljava/lang/Object;"},
                                                           {integer_class, "java/lang/Integer"},
                                                           {long_class, "java/lang/Long"},
                                                           {boolean_class, "java/lang/Boolean"},
                                                           {character_class, "java/lang/Character"},
                                                           {double_class, "java/lang/Double"},
                                                           {short_class, "java/lang/Short"},
                                                           {byte_class, "java/lang/Byte"},
                                                           {float_class, "java/lang/Float"}};
    std::uint32_t serial = 1;
    for (auto [class_id, name] : names) {
        b.utf8(0x900 + serial, name);
        b.load_class(serial, class_id, 0, 0x900 + serial);
        ++serial;
    }
    const std::pair<std::uint64_t, const char*> fields[] = {{f_value, "value"},
                                                            {f_coder, "coder"},
                                                            {f_hash, "hash"},
                                                            {f_table, "table"},
                                                            {f_entry_set, "entrySet"},
                                                            {f_size, "size"},
                                                            {f_mod_count, "modCount"},
                                                            {f_threshold, "threshold"},
                                                            {f_load_factor, "loadFactor"},
                                                            {f_head, "head"},
                                                            {f_tail, "tail"},
                                                            {f_access_order, "accessOrder"},
                                                            {f_map, "map"},
                                                            {f_element_data, "elementData"},
                                                            {f_next_table, "nextTable"},
                                                            {f_base_count, "baseCount"},
                                                            {f_size_ctl, "sizeCtl"}};
    for (auto [id, text] : fields) b.utf8(id, text);
    b.begin_segment();
    b.class_dump(object_class, 0, {});
    if (utf16_strings)
        b.class_dump(string_class, object_class, {{f_value, t_object}, {f_coder, t_byte}, {f_hash, t_int}});
    else  // JDK 8: a char[] value and no coder
        b.class_dump(string_class, object_class, {{f_value, t_object}, {f_hash, t_int}});
    b.class_dump(hash_map_class, object_class,
                 {{f_table, t_object},
                  {f_entry_set, t_object},
                  {f_size, t_int},
                  {f_mod_count, t_int},
                  {f_threshold, t_int},
                  {f_load_factor, t_float}});
    b.class_dump(linked_map_class, hash_map_class,
                 {{f_head, t_object}, {f_tail, t_object}, {f_access_order, t_boolean}});
    // A subclass with a field of its own named size, which must not be taken for HashMap.size.
    b.class_dump(lru_map_class, linked_map_class, {{f_size, t_long}});
    b.class_dump(hash_set_class, object_class, {{f_map, t_object}});
    b.class_dump(array_list_class, object_class, {{f_element_data, t_object}, {f_size, t_int}});
    b.class_dump(my_list_class, array_list_class, {});
    b.class_dump(chm_class, object_class,
                 {{f_table, t_object}, {f_next_table, t_object}, {f_base_count, t_long}, {f_size_ctl, t_int}});
    b.class_dump(object_array_class, object_class, {});
    b.class_dump(integer_class, object_class, {{f_value, t_int}});
    b.class_dump(long_class, object_class, {{f_value, t_long}});
    b.class_dump(boolean_class, object_class, {{f_value, t_boolean}});
    b.class_dump(character_class, object_class, {{f_value, t_char}});
    b.class_dump(double_class, object_class, {{f_value, t_double}});
    b.class_dump(short_class, object_class, {{f_value, t_short}});
    b.class_dump(byte_class, object_class, {{f_value, t_byte}});
    b.class_dump(float_class, object_class, {{f_value, t_float}});
}

byte_vector latin1(std::string_view s) {
    byte_vector out;
    test::put_text(out, s);
    return out;
}

// UTF-16 little-endian, as a JDK 9+ String with coder 1 holds it on x86.
byte_vector utf16le(std::u16string_view s) {
    byte_vector out;
    for (char16_t c : s) {
        out.push_back(static_cast<std::byte>(c & 0xFF));
        out.push_back(static_cast<std::byte>(c >> 8));
    }
    return out;
}

// A JDK 9+ String: value, coder, hash (this class's fields only).
void string_object(hprof_builder& b, std::uint64_t id, std::uint64_t value_id, std::uint8_t coder = 0) {
    b.instance(id, string_class, values(b.id_size()).id(value_id).u1(coder).u4(0).bytes());
}
void byte_array(hprof_builder& b, std::uint64_t id, const byte_vector& bytes) {
    b.primitive_array(id, t_byte, static_cast<std::uint32_t>(bytes.size()), bytes);
}

// HashMap data: table, entrySet, size, modCount, threshold, loadFactor.
byte_vector hash_map_data(std::uint64_t table, std::int32_t size) {
    return values(8).id(table).id(0).u4(static_cast<std::uint32_t>(size)).u4(0).u4(0).u4(0x3F400000);
}
// An Object[] of length slots, the first `used` of them non-null.
void table(hprof_builder& b, std::uint64_t id, std::uint32_t length, std::uint32_t used = 0) {
    std::vector<std::uint64_t> elements(length, 0);
    for (std::uint32_t i = 0; i < used && i < length; ++i) elements[i] = 0xE0000 + i;
    b.object_array(id, object_array_class, elements);
}

// The index, classes, census and waste of a finished builder.
struct analyzed {
    explicit analyzed(const hprof_builder& b, unsigned top = 0)
        : reader(*hprof_reader::parse(b.span())), idx(record_index::build(reader)), classes(idx) {
        heap_census census(idx, classes, 0);
        walk_heap(idx, census);
        c = census.finish();
        w = find_waste(idx, classes, c, top);
    }
    hprof_reader reader;
    record_index idx;
    class_table classes;
    census_result c;
    waste_report w;
};

// Shallow sizes under 64-bit compressed oops, the layout a synthetic 8-byte-id dump is given.
constexpr std::uint64_t string_size = 24, table_16 = 16 + 16 * 4;
std::uint64_t byte_array_size(std::uint64_t n) { return (16 + n + 7) / 8 * 8; }
std::uint64_t ref_array_size(std::uint64_t n) { return (16 + 4 * n + 7) / 8 * 8; }

const duplicate_string_entry* group(const waste_report& w, std::string_view content) {
    return test::find_row(w.duplicate_strings_top, &duplicate_string_entry::content, content);
}
const collection_waste_entry* collection(const waste_report& w, std::string_view name) {
    return test::find_row(w.collections, &collection_waste_entry::class_name, name);
}

// Strings: three with their own "hello" arrays, four sharing one "shared-value", three "mix" of
// which two share, two UTF-16 "€uro", and strings that have no equal.
hprof_builder strings_dump(unsigned id_size = 8) {
    hprof_builder b(id_size);
    declare_classes(b);
    for (std::uint64_t i = 0; i < 3; ++i) {
        string_object(b, 0x10000 + i * 0x10, 0x20000 + i * 0x10);
        byte_array(b, 0x20000 + i * 0x10, latin1("hello"));
    }
    for (std::uint64_t i = 0; i < 4; ++i) string_object(b, 0x11000 + i * 0x10, 0x21000);
    byte_array(b, 0x21000, latin1("shared-value"));
    string_object(b, 0x12000, 0x22000);
    string_object(b, 0x12010, 0x22000);
    string_object(b, 0x12020, 0x22010);
    byte_array(b, 0x22000, latin1("mix"));
    byte_array(b, 0x22010, latin1("mix"));
    string_object(b, 0x13000, 0x23000, 1);
    string_object(b, 0x13010, 0x23010, 1);
    byte_array(b, 0x23000, utf16le(u"\u20ACuro"));
    byte_array(b, 0x23010, utf16le(u"\u20ACuro"));
    // The same two bytes as Latin-1 "AB" and as UTF-16 U+4241: different strings.
    string_object(b, 0x14000, 0x24000, 0);
    string_object(b, 0x14010, 0x24010, 1);
    byte_array(b, 0x24000, latin1("AB"));
    byte_array(b, 0x24010, latin1("AB"));
    string_object(b, 0x14020, 0x24020);
    byte_array(b, 0x24020, latin1("alone"));
    b.end_segment();
    b.heap_dump_end();
    return b;
}

}  // namespace heapd::waste_test
