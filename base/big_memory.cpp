#include "base/big_memory.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>

namespace heapd::big_memory {
namespace {

// One mapped array: its size and, when spilled, where it lies in the spill file.
struct region {
    std::size_t bytes = 0;
    off_t offset = -1;  // -1: anonymous
};

// The process's big arrays and the policy that places them.
struct registry {
    std::mutex lock;
    int file = -1;
    std::uint64_t budget = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t max_spilled = std::numeric_limits<std::uint64_t>::max();
    off_t next_offset = 0;  // file offsets only grow: freed regions are punched out, not reused
    std::map<const void*, region> regions;
    usage now;
};

registry& the_registry() {
    static registry r;
    return r;
}

constexpr std::size_t page = 4096;

std::size_t rounded(std::size_t bytes) { return (bytes + page - 1) / page * page; }

}  // namespace

void spill_to(int file, std::uint64_t anonymous_budget, std::uint64_t max_spilled) {
    registry& r = the_registry();
    const std::lock_guard hold(r.lock);
    r.file = file;
    r.budget = file >= 0 ? anonymous_budget : std::numeric_limits<std::uint64_t>::max();
    r.max_spilled = max_spilled;
    if (file >= 0) {
        const off_t end = ::lseek(file, 0, SEEK_END);
        r.next_offset = std::max<off_t>(r.next_offset, end > 0 ? static_cast<off_t>(rounded(end)) : 0);
    }
}

usage current_usage() {
    registry& r = the_registry();
    const std::lock_guard hold(r.lock);
    usage u = r.now;
    u.budget = r.budget;
    return u;
}

void* allocate(std::size_t bytes) {
    registry& r = the_registry();
    const std::size_t size = rounded(bytes);
    const std::lock_guard hold(r.lock);
    void* p = MAP_FAILED;
    region where{size, -1};
    if (r.file >= 0 && r.now.anonymous + size > r.budget) {
        // Beyond the budget: a region of the file, its blocks allocated now (a full disk fails
        // here rather than as SIGBUS at a write to the mapping).
        const off_t offset = r.next_offset;
        if (r.now.spilled + size <= r.max_spilled && ::fallocate(r.file, 0, offset, static_cast<off_t>(size)) == 0) {
            p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, r.file, offset);
            if (p != MAP_FAILED) {
                where.offset = offset;
                r.next_offset = offset + static_cast<off_t>(size);
            }
        }
    } else {
        p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        // Huge pages where the kernel has them (transparent_hugepage "madvise" or "always"): one
        // page fault per 2 MiB instead of per 4 KiB, which on virtual machines is most of the cost of
        // first touching an array. Advice only: without them the mapping works the same.
        if (p != MAP_FAILED) (void)::madvise(p, size, MADV_HUGEPAGE);
    }
    if (p == MAP_FAILED) throw std::bad_alloc();
    r.regions.emplace(p, where);
    if (where.offset >= 0) {
        r.now.spilled += size;
        r.now.spilled_peak = std::max(r.now.spilled_peak, r.now.spilled);
    } else {
        r.now.anonymous += size;
        r.now.anonymous_peak = std::max(r.now.anonymous_peak, r.now.anonymous);
    }
    return p;
}

void release(void* p, std::size_t bytes) noexcept {
    if (p == nullptr) return;
    registry& r = the_registry();
    const std::lock_guard hold(r.lock);
    auto it = r.regions.find(p);
    const region where = it != r.regions.end() ? it->second : region{rounded(bytes), -1};
    if (it != r.regions.end()) r.regions.erase(it);
    ::munmap(p, where.bytes);
    if (where.offset >= 0) {
        // Its blocks back to the filesystem (the file's size stays: later regions lie beyond).
        if (r.file >= 0)
            (void)::fallocate(r.file, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, where.offset,
                              static_cast<off_t>(where.bytes));
        r.now.spilled -= where.bytes;
    } else {
        r.now.anonymous -= where.bytes;
    }
}

}  // namespace heapd::big_memory
