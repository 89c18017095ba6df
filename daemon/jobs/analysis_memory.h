#pragma once
// How much memory an analysis process may take, and where its big arrays go beyond that: the
// object graph and dominator tree of a heap bigger than the machine's free memory are spilled to a
// nameless file (base/big_memory.h) instead of failing or being killed. Used by the daemon's
// analysis process and by `heapd analyze`.
#include <cstdint>
#include <limits>
#include <string>

#include "base/error.h"
#include "daemon/store/free_space.h"

namespace heapd::daemon {

// An analysis's memory: a limit of its own, and the file to spill to.
struct memory_plan {
    // Anonymous memory it may take beyond what it holds now (RLIMIT_DATA; 0: no limit of its own).
    // The big arrays stay within three quarters of it, or within half the memory available
    // (available_memory) when there is no limit; beyond that they are spilled.
    std::uint64_t limit = 0;
    int spill_file = -1;  // an unlinked file open read-write; -1: nothing is spilled
    std::uint64_t max_spilled = std::numeric_limits<std::uint64_t>::max();  // disk the spill may take
    // Beyond that, the spill leaves this much of its disk free (measured when the plan is applied).
    disk_reserve reserve;
};

// The spill's room as apply_memory_plan measured it: the disk's free space, the reserve left on it,
// and what the spill may take.
struct spill_room {
    std::uint64_t free = 0, reserve = 0, allowed = 0;
};
spill_room measured_spill_room();

// Why an analysis that ran out of room (std::bad_alloc) failed, for people: "the analysis needs more
// memory than LIMIT allows" when its memory was short, or, when its spill file (in spill_dir) was
// refused room, both figures: the memory and what the disk could take, less the reserve; when the
// analysis foresaw that its graph and tree could not fit (big_memory::expect), that it was refused
// before they were made, with what it needs and the room it had.
std::string out_of_room_text(const std::string& limit, const std::string& spill_dir);

// Sets the limit and the spill policy of this process (the spill bounded by max_spilled and by the
// free space of its disk less the reserve); an error when the limit cannot be set.
result<void> apply_memory_plan(const memory_plan& plan);

// A nameless file in dir to spill to (O_TMPFILE, mode 0600), or -1 when dir takes none.
int spill_file_in(const std::string& dir);

// The bytes this process may still take: what the host has available (host_memory_available), or
// less where its memory cgroup leaves less (its limit less its anonymous memory); 0 when unknown.
std::uint64_t available_memory();

}  // namespace heapd::daemon
