// libFuzzer entry point: feeds arbitrary bytes through the hsperfdata reader, its snapshot and the
// summary, reading every entry's value. Any sanitizer report, abort or escaping exception is a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "formats/hsperf/hsperfdata.h"
#include "formats/hsperf/hsperfdata_summary.h"

namespace {
// Keeps the optimizer from dropping reads whose results are otherwise unused.
volatile std::uint64_t sink;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
    auto parsed = heapd::hsperf_data::parse(bytes);
    if (!parsed) return 0;
    auto snap = parsed->snapshot();
    if (!snap) return 0;
    for (const auto& e : snap->entries()) {
        sink = sink + e.long_value().value_or(0) + e.string_value().value_or("").size() + e.name.size();
        sink = sink + (snap->find(e.name) != nullptr);
    }
    auto s = heapd::summarize(*parsed);
    if (s) sink = sink + static_cast<std::uint64_t>(s->heap.used) + s->generations.size() + s->oom.on_error.size();
    return 0;
}
