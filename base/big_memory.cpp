#include "base/big_memory.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <string>

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
    // While reuse scopes are open (reuse_scope), anonymous regions given back wait here for the
    // next allocation instead of being unmapped: pieces by address, neighbours merged.
    unsigned scopes = 0;
    std::map<char*, std::size_t> pool;
    std::uint64_t peak_with_pool = 0;  // the most anonymous bytes in use and pooled together
};

registry& the_registry() {
    static registry r;
    return r;
}

constexpr std::size_t page = 4096;

std::size_t rounded(std::size_t bytes) { return (bytes + page - 1) / page * page; }

// Unmaps pooled pieces, the biggest first, until at most keep bytes are pooled.
void trim_pool(registry& r, std::uint64_t keep) {
    while (r.now.pooled > keep && !r.pool.empty()) {
        auto biggest = std::max_element(r.pool.begin(), r.pool.end(),
                                        [](const auto& a, const auto& b) { return a.second < b.second; });
        ::munmap(biggest->first, biggest->second);
        r.now.pooled -= biggest->second;
        r.pool.erase(biggest);
    }
}

// The smallest pooled piece of at least size bytes, cut to size (the rest stays pooled); nullptr
// when none is big enough. Its pages were touched before: no page fault, no zeroing by the kernel.
void* from_pool(registry& r, std::size_t size) {
    auto best = r.pool.end();
    for (auto it = r.pool.begin(); it != r.pool.end(); ++it)
        if (it->second >= size && (best == r.pool.end() || it->second < best->second)) best = it;
    if (best == r.pool.end()) return nullptr;
    char* p = best->first;
    const std::size_t piece = best->second;
    r.pool.erase(best);
    if (piece > size) r.pool.emplace(p + size, piece - size);
    r.now.pooled -= size;
    return p;
}

// Pools [p, p + size), merged with the pieces it touches.
void to_pool(registry& r, char* p, std::size_t size) {
    r.now.pooled += size;
    auto next = r.pool.lower_bound(p);
    if (next != r.pool.end() && next->first == p + size) {
        size += next->second;
        next = r.pool.erase(next);
    }
    if (next != r.pool.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == p) {
            prev->second += size;
            return;
        }
    }
    r.pool.emplace(p, size);
}

// A fresh anonymous mapping of size bytes (zeroed by the kernel), or MAP_FAILED.
void* map_anonymous(std::size_t size) {
    return ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

// Whether the host of this virtual machine takes free memory back (a virtio balloon with free page
// reporting, feature bit 5: the driver's features file holds one '0' or '1' per bit).
bool free_memory_reported() {
    DIR* dir = ::opendir("/sys/bus/virtio/drivers/virtio_balloon");
    if (dir == nullptr) return false;
    bool reported = false;
    while (const dirent* e = ::readdir(dir)) {
        if (std::strncmp(e->d_name, "virtio", 6) != 0) continue;
        // Read through the directory's descriptor; the file itself never followed as a link.
        const std::string name = std::string(e->d_name) + "/features";
        const int fd = ::openat(::dirfd(dir), name.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0) continue;
        struct stat st {};
        char bits[8] = {};
        if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::read(fd, bits, sizeof bits) >= 6 && bits[5] == '1')
            reported = true;
        ::close(fd);
    }
    ::closedir(dir);
    return reported;
}

// Huge pages (transparent_hugepage "madvise" or "always") mean one page fault per 2 MiB instead of
// per 4 KiB and fewer TLB misses in the random walks of the graph: first touching them costs a third
// of what small pages cost (0.13 s per GB against 0.35, measured on this project's machine). Not
// where the host takes free memory back: it hands it out again slowly in huge pages, measured five
// times the cost of small ones (2.2 s per GB against 0.45), most of an analysis's time.
void advise_fresh(void* p, std::size_t size) {
    static const bool huge = !free_memory_reported();
    if (huge) (void)::madvise(p, size, MADV_HUGEPAGE);
}

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

void expect(std::uint64_t bytes) {
    registry& r = the_registry();
    const std::lock_guard hold(r.lock);
    if (r.file < 0) return;
    const std::uint64_t memory = r.budget > r.now.anonymous ? r.budget - r.now.anonymous : 0;
    const std::uint64_t disk = r.max_spilled > r.now.spilled ? r.max_spilled - r.now.spilled : 0;
    const std::uint64_t room = memory > std::numeric_limits<std::uint64_t>::max() - disk
                                   ? std::numeric_limits<std::uint64_t>::max()
                                   : memory + disk;
    if (bytes <= room) return;
    r.now.foreseen = bytes;
    r.now.foreseen_room = room;
    throw std::bad_alloc();
}

void* allocate(std::size_t bytes) {
    registry& r = the_registry();
    const std::size_t size = rounded(bytes);
    const std::lock_guard hold(r.lock);
    void* p = MAP_FAILED;
    region where{size, -1};
    if (r.file >= 0 && r.now.anonymous + size > r.budget) {
        trim_pool(r, 0);  // pooled pages are anonymous memory beyond the budget too
        // Beyond the budget: a region of the file, its blocks allocated now (a full disk fails
        // here rather than as SIGBUS at a write to the mapping).
        const off_t offset = r.next_offset;
        const bool within = r.now.spilled + size <= r.max_spilled;
        if (within && ::fallocate(r.file, 0, offset, static_cast<off_t>(size)) == 0) {
            p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, r.file, offset);
            if (p != MAP_FAILED) {
                where.offset = offset;
                r.next_offset = offset + static_cast<off_t>(size);
            }
        } else if (r.now.spill_refused == 0) {
            r.now.spill_refused = size;
            r.now.spilled_then = r.now.spilled;
            r.now.disk_full = within && (errno == ENOSPC || errno == EDQUOT);
        }
    } else if (void* reused = from_pool(r, size)) {
        p = reused;
    } else {
        // Fresh memory only after pooled pieces were given back, so that what is in use and pooled
        // never passes the most that was in use before, or what is in use with this array.
        std::uint64_t keep = std::max<std::uint64_t>(r.peak_with_pool, r.now.anonymous + size) - r.now.anonymous - size;
        if (r.file >= 0) keep = std::min<std::uint64_t>(keep, r.budget - r.now.anonymous - size);
        trim_pool(r, keep);
        p = map_anonymous(size);
        if (p == MAP_FAILED && r.now.pooled != 0) {
            trim_pool(r, 0);
            p = map_anonymous(size);
        }
        if (p != MAP_FAILED) advise_fresh(p, size);
    }
    if (p == MAP_FAILED) throw std::bad_alloc();
    r.regions.emplace(p, where);
    if (where.offset >= 0) {
        r.now.spilled += size;
        r.now.spilled_peak = std::max(r.now.spilled_peak, r.now.spilled);
    } else {
        r.now.anonymous += size;
        r.now.anonymous_peak = std::max(r.now.anonymous_peak, r.now.anonymous);
        r.peak_with_pool = std::max(r.peak_with_pool, r.now.anonymous + r.now.pooled);
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
    if (where.offset >= 0) {
        ::munmap(p, where.bytes);
        // Its blocks back to the filesystem (the file's size stays: later regions lie beyond).
        if (r.file >= 0)
            (void)::fallocate(r.file, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, where.offset,
                              static_cast<off_t>(where.bytes));
        r.now.spilled -= where.bytes;
    } else {
        if (r.scopes != 0)
            to_pool(r, static_cast<char*>(p), where.bytes);
        else
            ::munmap(p, where.bytes);
        r.now.anonymous -= where.bytes;
    }
}

reuse_scope::reuse_scope() {
    registry& r = the_registry();
    const std::lock_guard hold(r.lock);
    if (r.scopes++ == 0) {
        r.peak_with_pool = r.now.anonymous;
    }
}

reuse_scope::~reuse_scope() {
    registry& r = the_registry();
    const std::lock_guard hold(r.lock);
    if (--r.scopes == 0) trim_pool(r, 0);
}

}  // namespace heapd::big_memory
