// Tests of the waste pass on synthetic dumps: empty and sparse collections, boxes, zero-filled
// arrays, and damaged input that must never crash (duplicate strings: waste_strings_test.cpp).
#include "analysis/waste_test_dump.h"

namespace heapd::waste_test {
namespace {

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
        b.instance(id, chm_class,
                   values(8).id(table_id).id(0).u8(static_cast<std::uint64_t>(base_count)).u4(0).bytes());
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
    const analyzed a(collections_dump());
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
    for (std::uint64_t v :
         {7ull, 0x0102030405060708ull, 7ull, 0xFF00000000000001ull, 0x0102030405060708ull, 0x0002030405060708ull})
        b.instance(id += 0x10, long_class, values(8).u8(v).bytes());
    for (std::uint8_t v : {1, 0, 1}) b.instance(id += 0x10, boolean_class, values(8).u1(v).bytes());
    b.instance(id += 0x10, character_class, values(8).u2('a').bytes());
    // Doubles by bit pattern: 0.0 and -0.0 differ.
    for (std::uint64_t bits : {0x0ull, 0x8000000000000000ull, 0x0ull})
        b.instance(id += 0x10, double_class, values(8).u8(bits).bytes());
    b.end_segment();
    const analyzed a(b);
    const std::vector<boxed_waste_entry>& boxed = a.w.boxed;
    struct want {
        const char* name;
        std::uint64_t count, bytes, distinct, saving;
    };
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
    b.primitive_array(0x20000, t_long, 3);                                          // zeros: 16 + 24 = 40
    b.primitive_array(0x20010, t_long, 2, values(8).u8(0).u8(1).bytes());           // not zeros
    b.primitive_array(0x20020, t_long, 0);                                          // empty: not counted
    b.primitive_array(0x20030, t_byte, 5);                                          // 16 + 5 -> 24
    b.primitive_array(0x20040, t_int, 1);                                           // 16 + 4 -> 24
    b.primitive_array(0x20050, t_int, 3, values(8).u4(0).u4(0).u4(0x100).bytes());  // last one not zero
    b.primitive_array(0x20060, t_short, 2, values(8).u2(0x8000).u2(0).bytes());     // first one not zero
    b.primitive_array_nodata(0x20070, t_char, 4);                                   // contents unknown
    b.primitive_array(0x20080, t_double, 1000);                                     // 16 + 8000
    // A String whose value is all zeros is left to the string report.
    string_object(b, 0x10000, 0x20090);
    b.primitive_array(0x20090, t_byte, 4);
    b.end_segment();
    const analyzed a(b);
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

TEST(find_waste, arrays_before_their_holders_in_the_dump_are_found_as_after) {
    // The walk keeps the arrays and joins them to their holders afterwards: the order in the dump
    // does not matter (a JVM allocates a String's value before the String, a map's table after it).
    hprof_builder b(8);
    declare_classes(b);
    table(b, 0x30000, 16);
    b.instance(0x10000, hash_map_class, hash_map_data(0x30000, 0));  // empty: 16 slots
    table(b, 0x30010, 64, 2);
    b.instance(0x10010, hash_map_class, hash_map_data(0x30010, 2));  // sparse: 4 slots would do
    b.primitive_array(0x20000, t_byte, 4);                           // zeros, but a String's value
    string_object(b, 0x10020, 0x20000);
    b.primitive_array(0x20010, t_byte, 4);  // zeros, nobody's value
    b.end_segment();
    const analyzed a(b);
    const collection_waste_entry* hm = collection(a.w, "java.util.HashMap");
    ASSERT_NE(hm, nullptr);
    EXPECT_EQ(hm->empty, 1u);
    EXPECT_EQ(hm->sparse, 1u);
    EXPECT_EQ(hm->saving_bytes, table_16 + ref_array_size(64) - ref_array_size(4));
    ASSERT_EQ(a.w.zero_arrays.size(), 1u);
    EXPECT_EQ(a.w.zero_arrays[0].count, 1u);
    EXPECT_EQ(a.w.zero_arrays[0].bytes, 24u);
}

TEST(find_waste, strings_without_a_readable_value_array_are_left_out) {
    hprof_builder b(8);
    declare_classes(b);
    string_object(b, 0x10000, 0);  // null value
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
    const analyzed a(b);
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
    const std::uint64_t full_groups = analyzed(whole).w.duplicate_string_groups;
    ASSERT_GT(whole.size(), 1000u);
    for (std::size_t cut = whole.size() - 1; cut > whole.size() - 700; cut -= 7) {
        hprof_builder b = whole;
        b.truncate(cut);
        auto reader = hprof_reader::parse(b.span());
        ASSERT_TRUE(reader.has_value());
        const analyzed a(b);
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
    const analyzed a(b);
    ASSERT_EQ(a.w.duplicate_strings_top.size(), 1u);
    EXPECT_EQ(a.w.duplicate_strings_top[0].content, "kept");
    // A dump without classes or objects.
    hprof_builder empty(8);
    empty.begin_segment().end_segment().heap_dump_end();
    const analyzed e(empty);
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

}  // namespace
}  // namespace heapd::waste_test
