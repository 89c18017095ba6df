#pragma once
// The waste pass: bytes the heap could do without. One walk over the heap finds
//
// - duplicate strings (duplicate_strings.h): java.lang.String objects with equal contents (value
//   array bytes and coder). Keeping one String per group saves, per further copy, the String's
//   shallow size plus its value array's, except that Strings sharing one value array cost only the
//   String: saving = (copies - 1) × String + (value arrays - 1) × value array. String classes with
//   an `offset` field (JDK 6, where substrings share arrays) are left out.
// - empty and sparse collections: java.util.HashMap and subclasses (a HashSet through its map),
//   java.util.ArrayList and subclasses, java.util.concurrent.ConcurrentHashMap and subclasses.
//   Empty: size 0 with a backing array (table, elementData) of length > 0; saving = that array's
//   shallow size. Sparse: size > 0 and size < length / 4; saving = the array's shallow size minus
//   that of the array the entries need: `size` slots for a list, for a hash map the smallest power
//   of two holding them at the default load factor 0.75 (>= 4 × size / 3). A ConcurrentHashMap's
//   size is its baseCount, or its occupied bins when more (its counter cells are not followed).
//   A null table or a zero-length (shared) array is neither empty nor sparse.
// - boxed primitives (Integer, Long, Short, Byte, Character, Boolean, Float, Double): per class
//   count, bytes and distinct values (by bit pattern); saving = the boxes beyond one per distinct
//   value, (count - distinct) × instance size, what sharing canonical boxes would save.
// - zero-filled primitive arrays: length > 0 and every element zero; saving = their shallow bytes.
//   String value arrays are left to the duplicate strings and not counted here.
//
// Sizes are the census's (HotSpot's layout as inferred). The walk reads Strings, collections and
// boxes, keeps the byte[] and char[] that may be String values and every object array's length and
// non-null elements, and checks every primitive array for zeros; Strings and collections are then
// joined to their arrays by sorting both by id (linear: radix_sort.h), so that no hash table is
// probed per object and an array may lie before or after its holder. Memory beyond the mapping:
// about 64 bytes per String (duplicate_strings.h), 24 per byte[] or char[], 24 per collection and
// 16 per object array, and for boxes 8 bytes per value, made unique whenever 2^20 or twice the last
// distinct count pile up (so at most 8 MiB per box class or 16 bytes per distinct value, twice that
// while sorting), plus a fixed amount per class; nothing for other objects. Bad input never
// crashes: unreadable fields skip the object, missing arrays leave it uncounted.
#include <cstdint>

#include "analysis/census.h"
#include "formats/hprof/class_table.h"
#include "formats/hprof/record_index.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace analysis {

// Finds the waste of an indexed dump whose census has run; keeps the top duplicate-string groups
// by saving (0: all) and every collection, box and array type row.
waste_report find_waste(const record_index& idx, const class_table& classes, const census_result& census, unsigned top);

}  // namespace analysis
}  // namespace heapd
