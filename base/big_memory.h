#pragma once
// Where the big arrays of an analysis live (graph, dominator tree: hundreds of megabytes to tens of
// gigabytes): in anonymous memory while their total stays within a budget, beyond it in pages of a
// file (a shared mapping of a nameless file on disk) that the kernel writes out and drops when
// memory is short, so that a heap bigger than the machine's free memory can still be analysed.
// Arrays of 1 MiB or more are mapped on their own; smaller ones come from the ordinary heap.
//
// Process-wide and thread-safe. Without spill_to, every big array is anonymous (no budget).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <vector>

namespace heapd::big_memory {

// Big arrays beyond anonymous_budget bytes (in total) go to file, a regular file open read-write
// that nothing else uses (unlinked: an O_TMPFILE or a removed temporary), at most max_spilled bytes
// of them at a time; regions of it are allocated on disk when mapped (so a full disk is a failed
// allocation, not a fault later) and given back (punched out) when the array is freed. The caller
// keeps file open while any array may be allocated. file -1: none (all anonymous, no budget).
void spill_to(int file, std::uint64_t anonymous_budget,
              std::uint64_t max_spilled = std::numeric_limits<std::uint64_t>::max());

// Big-array bytes now and at the most, in anonymous memory and in the spill file.
struct usage {
    std::uint64_t anonymous = 0, anonymous_peak = 0;
    std::uint64_t spilled = 0, spilled_peak = 0;
    std::uint64_t pooled = 0;  // anonymous bytes given back and kept for reuse (reuse_scope)
    std::uint64_t budget = std::numeric_limits<std::uint64_t>::max();  // for anonymous memory (spill_to)
    // The size of the first array the spill file could not take (0: none), and why: the disk full
    // (its blocks could not be allocated), else the spill's limit (max_spilled) reached.
    std::uint64_t spill_refused = 0;
    std::uint64_t spilled_then = 0;  // bytes spilled when it was refused
    bool disk_full = false;
    // What expect refused (0: nothing): the bytes foreseen, and the room left for them then.
    std::uint64_t foreseen = 0, foreseen_room = 0;
};
usage current_usage();

// Before making big arrays whose total it knows a floor of (an analysis, once it has counted the
// objects): throws std::bad_alloc, noting both figures in usage::foreseen and foreseen_room, when
// bytes more than are in use cannot fit what the budget and the spill's limit leave (all of it
// spilled included), so that what cannot fit is refused before anything is written to disk. Does
// nothing without a spill file (spill_to): no budget then.
void expect(std::uint64_t bytes);

// Arrays this size or bigger are mapped on their own.
inline constexpr std::size_t big_bytes = std::size_t{1} << 20;

// While one of these lives (an analysis holds one), anonymous arrays given back are kept and their
// pages handed to the next arrays that fit, instead of being unmapped and new ones faulted in and
// zeroed by the kernel (on a virtual machine, most of the system time of an analysis). Pieces are
// cut to size and merged with their neighbours. Fresh memory is mapped only after pooled pieces are
// given back so that in use and pooled together stay within the most in use since the first scope
// opened, or what is in use with the new array; beyond the spill budget, none is pooled. The pool is
// unmapped when the last scope ends. Fresh arrays are advised to huge pages except on a virtual
// machine whose host takes free memory back (big_memory.cpp).
class reuse_scope {
public:
    reuse_scope();
    ~reuse_scope();
    reuse_scope(const reuse_scope&) = delete;
    reuse_scope& operator=(const reuse_scope&) = delete;
};

// Maps bytes (at least big_bytes) of memory, zeroed unless it comes from a reuse_scope's pool (a
// vector constructs its elements); throws std::bad_alloc when it cannot.
void* allocate(std::size_t bytes);
// Gives back what allocate returned, with the same size.
void release(void* p, std::size_t bytes) noexcept;

// An allocator for std::vector that maps big arrays as above.
template <class T>
struct allocator {
    using value_type = T;
    allocator() = default;
    template <class U>
    allocator(const allocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
        const std::size_t bytes = n * sizeof(T);
        if (bytes >= big_bytes) return static_cast<T*>(big_memory::allocate(bytes));
        return std::allocator<T>().allocate(n);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        const std::size_t bytes = n * sizeof(T);
        if (bytes >= big_bytes)
            big_memory::release(p, bytes);
        else
            std::allocator<T>().deallocate(p, n);
    }
    template <class U>
    bool operator==(const allocator<U>&) const noexcept {
        return true;
    }
};

}  // namespace heapd::big_memory

namespace heapd {

// A vector whose storage, once big, may be spilled to disk (big_memory).
template <class T>
using big_vector = std::vector<T, big_memory::allocator<T>>;

}  // namespace heapd
