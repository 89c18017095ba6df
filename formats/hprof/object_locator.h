#pragma once
// Finds the records of a few objects by id: with one walk over the heap, or, when something already
// knows where each object's record is (the object graph), by going there; no index of all objects.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "formats/hprof/heap_records.h"
#include "formats/hprof/id_map.h"
#include "formats/hprof/record_index.h"

namespace heapd {
inline namespace hprof {

// Where one located object's record is, as a view into the dump.
struct located_object {
    std::uint8_t tag = 0;  // 0x21 instance, 0x22 object array, 0x23 primitive array; 0 when not found
    instance_view instance{};
    object_array_view object_array{};
    primitive_array_view primitive_array{};
};

// Where the record of an object id starts in the dump (an offset a heap walk reported), when known.
using record_finder = std::function<std::optional<std::uint64_t>(std::uint64_t id)>;

// Locates the given ids (duplicates and 0 are ignored).
class object_locator {
public:
    // Remembers the records of ids: found in one walk over the heap, or, with a finder (which knows
    // every object of the dump, as the object graph does), read where it says, without a walk.
    object_locator(const record_index& idx, std::span<const std::uint64_t> ids, const record_finder& finder = {});
    // The object's record, or nullptr when the dump does not hold it.
    const located_object* find(std::uint64_t id) const;

private:
    id_map<std::uint32_t> slot_;
    std::vector<located_object> found_;
};

}  // namespace hprof
}  // namespace heapd
