// Big arrays in anonymous memory, then, beyond the budget, in a nameless file: the bytes are the
// same either way, the file's blocks are taken when an array is made and given back when it goes,
// and a bound on the file is a failed allocation, not a crash.
#include "base/big_memory.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <numeric>

#include "base/unique_fd.h"
#include "support/jvm_process.h"

namespace heapd {
namespace {

// Bytes of disk the file holds now (its blocks, not its size).
std::uint64_t disk_bytes(int fd) {
    struct stat st {};
    return ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_blocks) * 512 : 0;
}

// Sets a spill policy for one test and puts the default (nothing spilled) back after it.
struct spill_policy {
    spill_policy(int fd, std::uint64_t budget, std::uint64_t max = ~std::uint64_t{0}) {
        big_memory::spill_to(fd, budget, max);
    }
    ~spill_policy() { big_memory::spill_to(-1, 0); }
};

TEST(big_memory, without_a_spill_file_big_arrays_are_anonymous_and_small_ones_are_not_counted) {
    const auto before = big_memory::current_usage();
    {
        big_vector<std::uint32_t> big(1 << 20, 7);  // 4 MiB
        big_vector<std::uint32_t> small(1000, 7);
        const auto now = big_memory::current_usage();
        EXPECT_EQ(now.anonymous - before.anonymous, std::uint64_t{4} << 20);
        EXPECT_EQ(now.spilled, before.spilled);
        EXPECT_EQ(big[12345], 7u);
    }
    EXPECT_EQ(big_memory::current_usage().anonymous, before.anonymous);
}

TEST(big_memory, within_a_reuse_scope_arrays_given_back_are_reused_and_unmapped_when_it_ends) {
    const auto before = big_memory::current_usage();
    const std::byte* first_place = nullptr;
    {
        const big_memory::reuse_scope reuse;
        {
            big_vector<std::uint64_t> a(1 << 20, 1);  // 8 MiB
            first_place = reinterpret_cast<const std::byte*>(a.data());
        }
        EXPECT_EQ(big_memory::current_usage().anonymous, before.anonymous);
        EXPECT_EQ(big_memory::current_usage().pooled, before.pooled + (std::uint64_t{8} << 20));
        // A smaller array takes the front of the pooled piece; the rest stays pooled.
        big_vector<std::uint64_t> b(1 << 19, 2);  // 4 MiB
        EXPECT_EQ(reinterpret_cast<const std::byte*>(b.data()), first_place);
        EXPECT_EQ(big_memory::current_usage().pooled, before.pooled + (std::uint64_t{4} << 20));
        EXPECT_EQ(b[(1 << 19) - 1], 2u);
        // One too big for the pool is mapped fresh only after the pool is given back: in use and
        // pooled never pass the most in use before (8 MiB) or in use with the new array (4 + 16).
        big_vector<std::uint64_t> c(1 << 21, 3);  // 16 MiB
        const auto now = big_memory::current_usage();
        EXPECT_EQ(now.pooled, before.pooled);
        EXPECT_EQ(now.anonymous, before.anonymous + (std::uint64_t{20} << 20));
        b = {};
        b.shrink_to_fit();
        EXPECT_EQ(big_memory::current_usage().pooled, before.pooled + (std::uint64_t{4} << 20));
    }
    // The scope's end unmaps the pool, c and b in it.
    EXPECT_EQ(big_memory::current_usage().pooled, 0u);
    EXPECT_EQ(big_memory::current_usage().anonymous, before.anonymous);
}

TEST(big_memory, beyond_the_budget_arrays_live_in_the_file_and_give_its_blocks_back) {
    test::scratch_dir dir;
    unique_fd file(::open(dir.path().c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
    ASSERT_TRUE(file);
    const spill_policy policy(file.get(), std::uint64_t{6} << 20);
    {
        big_vector<std::uint64_t> first(1 << 19);  // 4 MiB: within the budget
        std::iota(first.begin(), first.end(), 0);
        EXPECT_EQ(big_memory::current_usage().spilled, 0u);
        EXPECT_EQ(disk_bytes(file.get()), 0u);
        big_vector<std::uint64_t> second(1 << 20);  // 8 MiB: beyond it, so in the file
        std::iota(second.begin(), second.end(), 1000);
        const auto now = big_memory::current_usage();
        EXPECT_EQ(now.spilled, std::uint64_t{8} << 20);
        EXPECT_GE(disk_bytes(file.get()), std::uint64_t{8} << 20);
        // The same bytes read back, after the kernel had the chance to write them out.
        ASSERT_EQ(::fsync(file.get()), 0);
        EXPECT_EQ(second[0], 1000u);
        EXPECT_EQ(second[(1 << 20) - 1], 1000u + (1 << 20) - 1);
        EXPECT_EQ(first[(1 << 19) - 1], (1u << 19) - 1);
        // A vector that grows is moved into a new region; the old one is given back.
        second.push_back(1);
        EXPECT_EQ(big_memory::current_usage().spilled, std::uint64_t{16} << 20);
        EXPECT_EQ(second[(1 << 20) - 1], 1000u + (1 << 20) - 1);
    }
    EXPECT_EQ(big_memory::current_usage().spilled, 0u);
    EXPECT_EQ(disk_bytes(file.get()), 0u);
    EXPECT_GE(big_memory::current_usage().spilled_peak, std::uint64_t{16} << 20);
}

TEST(big_memory, a_spill_beyond_its_bound_is_a_failed_allocation) {
    test::scratch_dir dir;
    unique_fd file(::open(dir.path().c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
    ASSERT_TRUE(file);
    const spill_policy policy(file.get(), 0, std::uint64_t{4} << 20);
    big_vector<std::uint8_t> fits(std::size_t{4} << 20);
    EXPECT_THROW(big_vector<std::uint8_t>(std::size_t{1} << 20), std::bad_alloc);
    EXPECT_EQ(big_memory::current_usage().spilled, std::uint64_t{4} << 20);
}

// What an analysis knows it will need is refused up front when the budget and the spill's bound
// cannot hold it beside what is in use, with both figures kept; what fits, or any need without a
// spill file, passes.
TEST(big_memory, a_need_beyond_memory_and_spill_is_refused_before_anything_is_made) {
    EXPECT_NO_THROW(big_memory::expect(~std::uint64_t{0}));  // no spill file: no budget
    test::scratch_dir dir;
    unique_fd file(::open(dir.path().c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
    ASSERT_TRUE(file);
    const spill_policy policy(file.get(), std::uint64_t{8} << 20, std::uint64_t{4} << 20);
    big_vector<std::uint8_t> held(std::size_t{2} << 20);  // in memory: 6 MiB of it left, and 4 of disk
    EXPECT_NO_THROW(big_memory::expect(std::uint64_t{10} << 20));
    EXPECT_THROW(big_memory::expect((std::uint64_t{10} << 20) + 1), std::bad_alloc);
    const big_memory::usage u = big_memory::current_usage();
    EXPECT_EQ(u.foreseen, (std::uint64_t{10} << 20) + 1);
    EXPECT_EQ(u.foreseen_room, std::uint64_t{10} << 20);
    EXPECT_EQ(disk_bytes(file.get()), 0u);
}

}  // namespace
}  // namespace heapd
