// Tests of the waste pass on synthetic dumps: duplicate strings (own, shared and mixed value
// arrays, Latin-1, UTF-16 and char[]), empty and sparse collections, boxes, zero-filled arrays,
// and damaged input that must never crash.
#include "formats/waste.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "formats/analysis.h"
#include "formats/heap_walk.h"
#include "formats/hprof_reader.h"
#include "formats/report_json.h"
#include "formats/report_text.h"
#include "tests/support/row_lookup.h"
#include "tests/support/hprof_builder.h"

namespace heapd {
namespace {

using test::byte_vector;
using test::hprof_builder;
using test::values;

constexpr std::uint8_t t_object = 2, t_boolean = 4, t_char = 5, t_float = 6, t_double = 7, t_byte = 8, t_short = 9,
                       t_int = 10, t_long = 11;

// Class ids of the synthetic dumps.
enum : std::uint64_t {
    object_class = 0x100, string_class, hash_map_class, linked_map_class, hash_set_class, array_list_class,
    chm_class, lru_map_class, my_list_class, object_array_class, integer_class, long_class, boolean_class,
    character_class, double_class, short_class, byte_class, float_class,
};
// UTF8 ids of field names.
enum : std::uint64_t {
    f_value = 0x800, f_coder, f_hash, f_table, f_entry_set, f_size, f_mod_count, f_threshold, f_load_factor, f_head,
    f_tail, f_access_order, f_map, f_element_data, f_next_table, f_base_count, f_size_ctl,
};

// Writes names and LOAD_CLASS records, then opens a segment with the CLASS_DUMPs of a JDK 17-like
// String, HashMap family, ArrayList, ConcurrentHashMap, boxes and Object[].
void declare_classes(hprof_builder& b, bool utf16_strings = true) {
    const std::pair<std::uint64_t, const char*> names[] = {
        {object_class, "java/lang/Object"}, {string_class, "java/lang/String"},
        {hash_map_class, "java/util/HashMap"}, {linked_map_class, "java/util/LinkedHashMap"},
        {hash_set_class, "java/util/HashSet"}, {array_list_class, "java/util/ArrayList"},
        {chm_class, "java/util/concurrent/ConcurrentHashMap"}, {lru_map_class, "demo/LruMap"},
        {my_list_class, "demo/MyList"}, {object_array_class, "[Ljava/lang/Object;"},
        {integer_class, "java/lang/Integer"}, {long_class, "java/lang/Long"}, {boolean_class, "java/lang/Boolean"},
        {character_class, "java/lang/Character"}, {double_class, "java/lang/Double"},
        {short_class, "java/lang/Short"}, {byte_class, "java/lang/Byte"}, {float_class, "java/lang/Float"}};
    std::uint32_t serial = 1;
    for (auto [class_id, name] : names) {
        b.utf8(0x900 + serial, name);
        b.load_class(serial, class_id, 0, 0x900 + serial);
        ++serial;
    }
    const std::pair<std::uint64_t, const char*> fields[] = {
        {f_value, "value"}, {f_coder, "coder"}, {f_hash, "hash"}, {f_table, "table"}, {f_entry_set, "entrySet"},
        {f_size, "size"}, {f_mod_count, "modCount"}, {f_threshold, "threshold"}, {f_load_factor, "loadFactor"},
        {f_head, "head"}, {f_tail, "tail"}, {f_access_order, "accessOrder"}, {f_map, "map"},
        {f_element_data, "elementData"}, {f_next_table, "nextTable"}, {f_base_count, "baseCount"},
        {f_size_ctl, "sizeCtl"}};
    for (auto [id, text] : fields) b.utf8(id, text);
    b.begin_segment();
    b.class_dump(object_class, 0, {});
    if (utf16_strings)
        b.class_dump(string_class, object_class, {{f_value, t_object}, {f_coder, t_byte}, {f_hash, t_int}});
    else  // JDK 8: a char[] value and no coder
        b.class_dump(string_class, object_class, {{f_value, t_object}, {f_hash, t_int}});
    b.class_dump(hash_map_class, object_class,
                 {{f_table, t_object}, {f_entry_set, t_object}, {f_size, t_int}, {f_mod_count, t_int},
                  {f_threshold, t_int}, {f_load_factor, t_float}});
    b.class_dump(linked_map_class, hash_map_class, {{f_head, t_object}, {f_tail, t_object}, {f_access_order, t_boolean}});
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
struct analysed {
    explicit analysed(const hprof_builder& b, unsigned top = 0)
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

TEST(find_waste, groups_strings_of_equal_contents_and_counts_shared_arrays_once) {
    const analysed a(strings_dump());
    ASSERT_EQ(a.c.layout, "64-bit, compressed oops");
    ASSERT_TRUE(a.w.computed);
    const waste_report& w = a.w;
    ASSERT_EQ(w.duplicate_strings_top.size(), 4u);
    const std::uint64_t hello = 2 * (string_size + byte_array_size(5));
    const std::uint64_t shared = 3 * string_size;  // one value array for all four
    const std::uint64_t mix = 2 * string_size + 1 * byte_array_size(3);  // two arrays for three Strings
    const std::uint64_t euro = 1 * (string_size + byte_array_size(8));
    EXPECT_EQ(hello, 96u);
    EXPECT_EQ(shared, 72u);
    EXPECT_EQ(mix, 72u);
    // By saving, then copies, then contents.
    EXPECT_EQ(w.duplicate_strings_top[0].content, "hello");
    EXPECT_EQ(w.duplicate_strings_top[0].copies, 3u);
    EXPECT_EQ(w.duplicate_strings_top[0].length, 5u);
    EXPECT_EQ(w.duplicate_strings_top[0].saving_bytes, hello);
    EXPECT_EQ(w.duplicate_strings_top[1].content, "shared-value");
    EXPECT_EQ(w.duplicate_strings_top[1].copies, 4u);
    EXPECT_EQ(w.duplicate_strings_top[1].saving_bytes, shared);
    EXPECT_EQ(w.duplicate_strings_top[2].content, "mix");
    EXPECT_EQ(w.duplicate_strings_top[2].copies, 3u);
    EXPECT_EQ(w.duplicate_strings_top[2].saving_bytes, mix);
    EXPECT_EQ(w.duplicate_strings_top[3].content, "\xE2\x82\xAC" "uro");
    EXPECT_EQ(w.duplicate_strings_top[3].length, 4u);
    EXPECT_EQ(w.duplicate_strings_top[3].copies, 2u);
    EXPECT_EQ(w.duplicate_strings_top[3].saving_bytes, euro);
    EXPECT_EQ(w.duplicate_string_groups, 4u);
    EXPECT_EQ(w.duplicate_strings, 12u);
    EXPECT_EQ(w.duplicate_string_saving, hello + shared + mix + euro);
    EXPECT_EQ(group(w, "AB"), nullptr);
    EXPECT_EQ(group(w, "alone"), nullptr);
    // No collections, boxes, and String value arrays are not zero arrays.
    EXPECT_TRUE(w.collections.empty());
    EXPECT_TRUE(w.boxed.empty());
    EXPECT_TRUE(w.zero_arrays.empty());
    EXPECT_EQ(w.saving_bytes, w.duplicate_string_saving);
}

TEST(find_waste, top_keeps_the_biggest_groups_and_totals_cover_all) {
    const analysed all(strings_dump()), two(strings_dump(), 2);
    ASSERT_EQ(two.w.duplicate_strings_top.size(), 2u);
    EXPECT_EQ(two.w.duplicate_strings_top[0].content, "hello");
    EXPECT_EQ(two.w.duplicate_strings_top[1].content, "shared-value");
    EXPECT_EQ(two.w.duplicate_string_groups, all.w.duplicate_string_groups);
    EXPECT_EQ(two.w.duplicate_string_saving, all.w.duplicate_string_saving);
}

TEST(find_waste, strings_of_a_32_bit_dump_use_its_layout) {
    const analysed a(strings_dump(4));
    ASSERT_EQ(a.c.layout, "32-bit");
    // 32-bit: String = 8 header + 4 + 1 + 4 -> 24; byte[5] = 12 + 5 -> 24.
    const duplicate_string_entry* hello = group(a.w, "hello");
    ASSERT_NE(hello, nullptr);
    EXPECT_EQ(hello->copies, 3u);
    EXPECT_EQ(hello->saving_bytes, 2u * (24 + 24));
    const duplicate_string_entry* shared = group(a.w, "shared-value");
    ASSERT_NE(shared, nullptr);
    EXPECT_EQ(shared->saving_bytes, 3u * 24);
}

TEST(find_waste, jdk8_strings_hold_char_arrays) {
    hprof_builder b(8);
    declare_classes(b, false);
    byte_vector chars = values(8).u2('o').u2(0x00E9).u2('!');
    for (std::uint64_t i = 0; i < 3; ++i) {
        b.instance(0x10000 + i * 0x10, string_class, values(8).id(0x20000 + i * 0x10).u4(0).bytes());
        b.primitive_array(0x20000 + i * 0x10, t_char, 3, chars);
    }
    b.end_segment();
    const analysed a(b);
    ASSERT_EQ(a.w.duplicate_strings_top.size(), 1u);
    EXPECT_EQ(a.w.duplicate_strings_top[0].content, "o\xC3\xA9!");
    EXPECT_EQ(a.w.duplicate_strings_top[0].length, 3u);
    EXPECT_EQ(a.w.duplicate_strings_top[0].saving_bytes, 2u * (string_size + 24));  // char[3] = 16 + 6 -> 24
}

TEST(find_waste, long_and_odd_contents_are_shortened_and_escaped) {
    hprof_builder b(8);
    declare_classes(b);
    const std::string long_text(70, 'x');
    const std::string odd = "a\tb\"c\\\n\x01z";
    for (std::uint64_t i = 0; i < 2; ++i) {
        string_object(b, 0x10000 + i * 0x10, 0x20000 + i * 0x10);
        byte_array(b, 0x20000 + i * 0x10, latin1(long_text));
        string_object(b, 0x11000 + i * 0x10, 0x21000 + i * 0x10);
        byte_array(b, 0x21000 + i * 0x10, latin1(odd));
    }
    b.end_segment();
    const analysed a(b);
    ASSERT_EQ(a.w.duplicate_strings_top.size(), 2u);
    const duplicate_string_entry* l = group(a.w, std::string(50, 'x') + "...");
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(l->length, 70u);
    EXPECT_EQ(l->saving_bytes, string_size + byte_array_size(70));
    const duplicate_string_entry* o = group(a.w, "a\\tb\\\"c\\\\\\n\\u0001z");
    ASSERT_NE(o, nullptr);
    EXPECT_EQ(o->length, 9u);
}

// Maps and lists of every kind: empty with a table, null table, sparse, full, and the boundaries.
hprof_builder collections_dump() {
    hprof_builder b(8);
    declare_classes(b);
    // HashMap: empty with 16 slots; null table; 7 in 64 (sparse); 12 in 16 (full); 3 in 16 (sparse,
    // 12 < 16); 4 in 16 (not sparse); a table the dump does not hold.
    b.instance(0x10000, hash_map_class, hash_map_data(0x30000, 0));
    table(b, 0x30000, 16);
    b.instance(0x10010, hash_map_class, hash_map_data(0, 0));
    b.instance(0x10020, hash_map_class, hash_map_data(0x30020, 7));
    table(b, 0x30020, 64, 7);
    b.instance(0x10030, hash_map_class, hash_map_data(0x30030, 12));
    table(b, 0x30030, 16, 10);
    b.instance(0x10040, hash_map_class, hash_map_data(0x30040, 3));
    table(b, 0x30040, 16, 3);
    b.instance(0x10050, hash_map_class, hash_map_data(0x30050, 4));
    table(b, 0x30050, 16, 4);
    b.instance(0x10060, hash_map_class, hash_map_data(0x3FFFF, 0));
    // A HashSet is counted through its map (the HashMap at 0x10000 above).
    b.instance(0x11000, hash_set_class, values(8).id(0x10000).bytes());
    // LinkedHashMap (head, tail, accessOrder, then HashMap's fields): empty with 16 slots.
    byte_vector linked = values(8).id(0).id(0).u1(0);
    byte_vector map = hash_map_data(0x31000, 0);
    linked.insert(linked.end(), map.begin(), map.end());
    b.instance(0x12000, linked_map_class, linked);
    table(b, 0x31000, 16);
    // demo.LruMap: its own long size (999) comes first, HashMap.size is 0: empty.
    byte_vector lru = values(8).u8(999).id(0).id(0).u1(0);
    map = hash_map_data(0x31010, 0);
    lru.insert(lru.end(), map.begin(), map.end());
    b.instance(0x12010, lru_map_class, lru);
    table(b, 0x31010, 32);
    // ArrayList: empty with 10 slots; two sharing one zero-length array; 2 in 40 (sparse); 10 in 40.
    b.instance(0x13000, array_list_class, values(8).id(0x32000).u4(0).bytes());
    table(b, 0x32000, 10);
    b.instance(0x13010, array_list_class, values(8).id(0x32010).u4(0).bytes());
    b.instance(0x13020, array_list_class, values(8).id(0x32010).u4(0).bytes());
    table(b, 0x32010, 0);
    b.instance(0x13030, array_list_class, values(8).id(0x32030).u4(2).bytes());
    table(b, 0x32030, 40, 2);
    b.instance(0x13040, array_list_class, values(8).id(0x32040).u4(10).bytes());
    table(b, 0x32040, 40, 10);
    // demo.MyList (no fields of its own) extends ArrayList: 1 in 100.
    b.instance(0x13050, my_list_class, values(8).id(0x32050).u4(1).bytes());
    table(b, 0x32050, 100, 1);
    // ConcurrentHashMap: empty with 16 bins; baseCount 0 but one bin used (counts as 1: sparse);
    // a negative baseCount with nothing in the table (empty).
    auto chm = [&](std::uint64_t id, std::uint64_t table_id, std::int64_t base_count) {
        b.instance(id, chm_class, values(8).id(table_id).id(0).u8(static_cast<std::uint64_t>(base_count)).u4(0).bytes());
    };
    chm(0x14000, 0x33000, 0);
    table(b, 0x33000, 16);
    chm(0x14010, 0x33010, 0);
    table(b, 0x33010, 16, 1);
    chm(0x14020, 0x33020, -5);
    table(b, 0x33020, 16);
    b.end_segment();
    b.heap_dump_end();
    return b;
}

TEST(find_waste, counts_empty_and_sparse_collections_per_class) {
    const analysed a(collections_dump());
    const waste_report& w = a.w;
    EXPECT_EQ(collection(w, "java.util.HashSet"), nullptr);

    const collection_waste_entry* hm = collection(w, "java.util.HashMap");
    ASSERT_NE(hm, nullptr);
    EXPECT_EQ(hm->count, 7u);
    EXPECT_EQ(hm->empty, 1u);
    EXPECT_EQ(hm->sparse, 2u);
    // Empty: all 16 slots. 7 in 64: 16 slots hold 7 at load factor 0.75 (8 would not). 3 in 16: 4 do.
    EXPECT_EQ(hm->saving_bytes, table_16 + (ref_array_size(64) - ref_array_size(16)) + (table_16 - ref_array_size(4)));
    EXPECT_EQ(hm->saving_bytes, 80u + 192 + 48);

    const collection_waste_entry* linked = collection(w, "java.util.LinkedHashMap");
    ASSERT_NE(linked, nullptr);
    EXPECT_EQ(linked->count, 1u);
    EXPECT_EQ(linked->empty, 1u);
    EXPECT_EQ(linked->saving_bytes, table_16);
    const collection_waste_entry* lru = collection(w, "demo.LruMap");
    ASSERT_NE(lru, nullptr);
    EXPECT_EQ(lru->empty, 1u);
    EXPECT_EQ(lru->sparse, 0u);
    EXPECT_EQ(lru->saving_bytes, ref_array_size(32));

    const collection_waste_entry* list = collection(w, "java.util.ArrayList");
    ASSERT_NE(list, nullptr);
    EXPECT_EQ(list->count, 5u);
    EXPECT_EQ(list->empty, 1u);   // the zero-length shared array is not waste
    EXPECT_EQ(list->sparse, 1u);  // 10 in 40 is not below a quarter
    EXPECT_EQ(list->saving_bytes, ref_array_size(10) + ref_array_size(40) - ref_array_size(2));
    EXPECT_EQ(list->saving_bytes, 56u + 176 - 24);
    const collection_waste_entry* mine = collection(w, "demo.MyList");
    ASSERT_NE(mine, nullptr);
    EXPECT_EQ(mine->sparse, 1u);
    EXPECT_EQ(mine->saving_bytes, ref_array_size(100) - ref_array_size(1));

    const collection_waste_entry* chm = collection(w, "java.util.concurrent.ConcurrentHashMap");
    ASSERT_NE(chm, nullptr);
    EXPECT_EQ(chm->count, 3u);
    EXPECT_EQ(chm->empty, 2u);
    EXPECT_EQ(chm->sparse, 1u);
    EXPECT_EQ(chm->saving_bytes, 2 * table_16 + table_16 - ref_array_size(2));

    std::uint64_t total = 0;
    for (std::size_t i = 0; i < w.collections.size(); ++i) {
        total += w.collections[i].saving_bytes;
        if (i > 0) {
            EXPECT_GE(w.collections[i - 1].saving_bytes, w.collections[i].saving_bytes);
        }
    }
    EXPECT_EQ(w.collections.size(), 6u);
    EXPECT_EQ(w.collection_saving, total);
    EXPECT_TRUE(w.duplicate_strings_top.empty());
    // The tables are object arrays: nothing here is a zero-filled primitive array.
    EXPECT_TRUE(w.zero_arrays.empty());
    EXPECT_EQ(w.saving_bytes, total);
}

TEST(find_waste, counts_boxes_and_their_distinct_values) {
    hprof_builder b(8);
    declare_classes(b);
    std::uint64_t id = 0x10000;
    for (std::uint32_t v : {1u, 1u, 1u, 2u}) b.instance(id += 0x10, integer_class, values(8).u4(v).bytes());
    // Longs that differ in single bytes anywhere, for the sort that counts distinct values.
    for (std::uint64_t v : {7ull, 0x0102030405060708ull, 7ull, 0xFF00000000000001ull, 0x0102030405060708ull,
                            0x0002030405060708ull})
        b.instance(id += 0x10, long_class, values(8).u8(v).bytes());
    for (std::uint8_t v : {1, 0, 1}) b.instance(id += 0x10, boolean_class, values(8).u1(v).bytes());
    b.instance(id += 0x10, character_class, values(8).u2('a').bytes());
    // Doubles by bit pattern: 0.0 and -0.0 differ.
    for (std::uint64_t bits : {0x0ull, 0x8000000000000000ull, 0x0ull})
        b.instance(id += 0x10, double_class, values(8).u8(bits).bytes());
    b.end_segment();
    const analysed a(b);
    const std::vector<boxed_waste_entry>& boxed = a.w.boxed;
    struct want { const char* name; std::uint64_t count, bytes, distinct, saving; };
    // Integer, Boolean, Character: 16 bytes; Long, Double: 24 (the long aligned to 8).
    const want rows[] = {{"java.lang.Long", 6, 144, 4, 48},
                         {"java.lang.Integer", 4, 64, 2, 32},
                         {"java.lang.Double", 3, 72, 2, 24},
                         {"java.lang.Boolean", 3, 48, 2, 16},
                         {"java.lang.Character", 1, 16, 1, 0}};
    ASSERT_EQ(boxed.size(), std::size(rows));
    for (std::size_t i = 0; i < std::size(rows); ++i) {
        SCOPED_TRACE(rows[i].name);
        EXPECT_EQ(boxed[i].class_name, rows[i].name);
        EXPECT_EQ(boxed[i].count, rows[i].count);
        EXPECT_EQ(boxed[i].bytes, rows[i].bytes);
        EXPECT_EQ(boxed[i].distinct_values, rows[i].distinct);
        EXPECT_EQ(boxed[i].saving_bytes, rows[i].saving);
    }
    EXPECT_EQ(a.w.boxed_saving, 48u + 32 + 24 + 16);
    EXPECT_EQ(a.w.saving_bytes, a.w.boxed_saving);
}

TEST(find_waste, counts_primitive_arrays_of_zeros_only) {
    hprof_builder b(8);
    declare_classes(b);
    b.primitive_array(0x20000, t_long, 3);                                     // zeros: 16 + 24 = 40
    b.primitive_array(0x20010, t_long, 2, values(8).u8(0).u8(1).bytes());      // not zeros
    b.primitive_array(0x20020, t_long, 0);                                     // empty: not counted
    b.primitive_array(0x20030, t_byte, 5);                                     // 16 + 5 -> 24
    b.primitive_array(0x20040, t_int, 1);                                      // 16 + 4 -> 24
    b.primitive_array(0x20050, t_int, 3, values(8).u4(0).u4(0).u4(0x100).bytes());  // last one not zero
    b.primitive_array(0x20060, t_short, 2, values(8).u2(0x8000).u2(0).bytes());     // first one not zero
    b.primitive_array_nodata(0x20070, t_char, 4);                              // contents unknown
    b.primitive_array(0x20080, t_double, 1000);                                // 16 + 8000
    // A String whose value is all zeros is left to the string report.
    string_object(b, 0x10000, 0x20090);
    b.primitive_array(0x20090, t_byte, 4);
    b.end_segment();
    const analysed a(b);
    const std::vector<zero_array_entry>& z = a.w.zero_arrays;
    ASSERT_EQ(z.size(), 4u);
    EXPECT_EQ(z[0].class_name, "double[]");
    EXPECT_EQ(z[0].count, 1u);
    EXPECT_EQ(z[0].bytes, 8016u);
    EXPECT_EQ(z[1].class_name, "long[]");
    EXPECT_EQ(z[1].count, 1u);
    EXPECT_EQ(z[1].bytes, 40u);
    EXPECT_EQ(z[2].class_name, "byte[]");
    EXPECT_EQ(z[2].bytes, 24u);
    EXPECT_EQ(z[3].class_name, "int[]");
    EXPECT_EQ(z[3].count, 1u);
    EXPECT_EQ(z[3].bytes, 24u);
    EXPECT_EQ(a.w.zero_array_saving, 8016u + 40 + 24 + 24);
    EXPECT_EQ(a.w.saving_bytes, a.w.zero_array_saving);
}

TEST(find_waste, strings_without_a_readable_value_array_are_left_out) {
    hprof_builder b(8);
    declare_classes(b);
    string_object(b, 0x10000, 0);        // null value
    string_object(b, 0x10010, 0);
    string_object(b, 0x10020, 0x2FFFF);  // value not in the dump
    string_object(b, 0x10030, 0x2FFFF);
    string_object(b, 0x10040, 0x20000);  // value is an object array
    string_object(b, 0x10050, 0x20000);
    table(b, 0x20000, 2);
    b.primitive_array_nodata(0x20010, t_byte, 3);  // value without data
    string_object(b, 0x10060, 0x20010);
    string_object(b, 0x10070, 0x20010);
    // Too short for its fields: only 3 of 13 bytes.
    b.instance(0x10080, string_class, values(8).u1(0).u1(0).u1(1).bytes());
    b.instance(0x10090, hash_map_class, values(8).u4(0).bytes());
    b.instance(0x100A0, integer_class, values(8).u2(0).bytes());
    b.end_segment();
    const analysed a(b);
    EXPECT_TRUE(a.w.computed);
    EXPECT_TRUE(a.w.duplicate_strings_top.empty());
    EXPECT_EQ(a.w.duplicate_string_groups, 0u);
    EXPECT_TRUE(a.w.collections.empty());
    EXPECT_TRUE(a.w.boxed.empty());
    EXPECT_EQ(a.w.saving_bytes, 0u);
}

TEST(find_waste, damaged_and_truncated_dumps_give_what_was_read) {
    const hprof_builder whole = strings_dump();
    // Every cut through the heap segment: no crash, and never more groups than the whole dump has.
    const std::uint64_t full_groups = analysed(whole).w.duplicate_string_groups;
    ASSERT_GT(whole.size(), 1000u);
    for (std::size_t cut = whole.size() - 1; cut > whole.size() - 700; cut -= 7) {
        hprof_builder b = whole;
        b.truncate(cut);
        auto reader = hprof_reader::parse(b.span());
        ASSERT_TRUE(reader.has_value());
        const analysed a(b);
        EXPECT_LE(a.w.duplicate_string_groups, full_groups) << cut;
    }
    // A sub-record with an unknown tag stops its segment; what came before is reported.
    hprof_builder b(8);
    declare_classes(b);
    for (std::uint64_t i = 0; i < 2; ++i) {
        string_object(b, 0x10000 + i * 0x10, 0x20000 + i * 0x10);
        byte_array(b, 0x20000 + i * 0x10, latin1("kept"));
    }
    b.raw_subrecord(values(8).u1(0x77).u4(0xFFFFFFFF).bytes());
    b.end_segment();
    const analysed a(b);
    ASSERT_EQ(a.w.duplicate_strings_top.size(), 1u);
    EXPECT_EQ(a.w.duplicate_strings_top[0].content, "kept");
    // A dump without classes or objects.
    hprof_builder empty(8);
    empty.begin_segment().end_segment().heap_dump_end();
    const analysed e(empty);
    EXPECT_TRUE(e.w.computed);
    EXPECT_EQ(e.w.saving_bytes, 0u);
}

TEST(analyze_dump, reports_waste_unless_told_not_to) {
    const hprof_builder b = strings_dump();
    auto on = analyze_dump(b.span(), {});
    ASSERT_TRUE(on.has_value());
    EXPECT_TRUE(on->waste.computed);
    EXPECT_EQ(on->waste.duplicate_string_groups, 4u);
    EXPECT_EQ(on->waste.saving_bytes, 96u + 72 + 72 + 48);
    EXPECT_TRUE(to_json(*on).contains("waste"));
    EXPECT_NE(render_text(*on, {}).find("\nWaste (288 B could be saved, "), std::string::npos);
    analysis_options o;
    o.waste = false;
    auto off = analyze_dump(b.span(), o);
    ASSERT_TRUE(off.has_value());
    EXPECT_FALSE(off->waste.computed);
    EXPECT_FALSE(to_json(*off).contains("waste"));
    EXPECT_EQ(render_text(*off, {}).find("Waste"), std::string::npos);
}

} // namespace
} // namespace heapd
