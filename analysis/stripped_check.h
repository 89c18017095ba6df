#pragma once
// Tells a stripped dump from one as the JVM wrote it: `heapd strip` and tools like it zero the
// contents of primitive arrays (all of them, or all but those of Strings), which leaves string
// contents, thread names and arrays of zeros meaning nothing.
#include <cstdint>
#include <span>

#include "formats/hprof/heap_records.h"

namespace heapd {
inline namespace analysis {

// True when d holds at least one byte and all its bytes are zero.
bool all_zero(std::span<const std::byte> d);

// What of a dump is stripped.
struct stripped_state {
    bool arrays = false;   // every primitive array but char[] and byte[] is zeros
    bool strings = false;  // every char[] and byte[] is zeros too (no string contents are left)
};

// Fed every primitive array of one walk. A kind (char[] and byte[], the other types) counts as
// stripped when at least min_arrays of its arrays have data and none holds a byte that is not zero:
// a JVM's heap has thousands of arrays of both kinds with non-zero contents, a handful may all be
// zeros. Reads an array's data only until an array of its kind with a non-zero byte was seen, so
// the check costs little on a dump that is not stripped. Memory: none per object.
class stripped_check {
public:
    static constexpr std::uint64_t min_arrays = 16;

    void add(const primitive_array_view& v);
    stripped_state result() const;

private:
    struct kind {
        std::uint64_t with_data = 0;
        bool non_zero = false;
        bool stripped() const { return !non_zero && with_data >= min_arrays; }
    };
    kind text_, other_;  // char[] and byte[]; the other types
};

}  // namespace analysis
}  // namespace heapd
