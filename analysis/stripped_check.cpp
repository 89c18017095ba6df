#include "analysis/stripped_check.h"

#include <cstring>

namespace heapd {
inline namespace analysis {

bool all_zero(std::span<const std::byte> d) {
    return !d.empty() && d[0] == std::byte{0} && std::memcmp(d.data(), d.data() + 1, d.size() - 1) == 0;
}

void stripped_check::add(const primitive_array_view& v) {
    if (v.data.empty()) return;
    kind& k = v.type == 5 || v.type == 8 ? text_ : other_;
    ++k.with_data;
    if (!k.non_zero && !all_zero(v.data)) k.non_zero = true;
}

stripped_state stripped_check::result() const {
    stripped_state s;
    s.arrays = other_.stripped();
    s.strings = s.arrays && text_.stripped();
    return s;
}

}  // namespace analysis
}  // namespace heapd
