#pragma once
// What could not be read in a dump, kept up to a bound and only counted past it: a damaged or
// crafted dump can have a problem per record (a file of zeros has one every 9 bytes), and each
// kept problem costs its message in memory and in the report.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "base/error.h"

namespace heapd {
inline namespace hprof {

// Problems in the order found: the first max_kept kept, the rest counted.
class problem_list {
public:
    static constexpr std::size_t max_kept = 100;

    void add(error_info e) {
        if (kept_.size() < max_kept)
            kept_.push_back(std::move(e));
        else
            ++omitted_;
    }
    const std::vector<error_info>& kept() const { return kept_; }
    std::uint64_t omitted() const { return omitted_; }
    bool empty() const { return kept_.empty(); }

private:
    std::vector<error_info> kept_;
    std::uint64_t omitted_ = 0;
};

}  // namespace hprof
}  // namespace heapd
