#pragma once
// The waste pass: bytes the heap could do without. Two walks over the heap find
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
// Sizes are the census's (HotSpot's layout as inferred). The first walk reads Strings, collections
// and boxes; the second reads the value arrays and backing arrays they name and checks every
// primitive array for zeros. Memory beyond the mapping grows with the objects of interest only:
// about 80 bytes per String (its value array's id, a view of its bytes and their hash, a sort
// entry), 60 bytes per collection with its backing array, and for boxes 8 bytes per value, made
// unique whenever 2^20 or twice the last distinct count pile up (so at most 8 MiB per box class
// or 16 bytes per distinct value, twice that while sorting), plus a fixed amount per class;
// nothing for other objects. Bad input never crashes: unreadable fields skip the object, missing
// arrays leave it uncounted.
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
