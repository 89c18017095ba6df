#pragma once
// Finds report rows by name in tests: the first row whose member equals the name, or nullptr.
#include <string_view>
#include <vector>

namespace heapd::test {

template <class Row, class Field>
const Row* find_row(const std::vector<Row>& rows, Field Row::*member, std::string_view name) {
    for (const Row& r : rows)
        if (r.*member == name) return &r;
    return nullptr;
}

}  // namespace heapd::test
