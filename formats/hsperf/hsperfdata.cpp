#include "formats/hsperf/hsperfdata.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "base/hex_text.h"

namespace heapd {
inline namespace hsperf {
namespace {

constexpr std::uint8_t magic[4] = {0xCA, 0xFE, 0xC0, 0xC0};

// An integer of the file's byte order; callers check bounds first.
template <class T>
T load(const std::byte* p, bool little_endian) {
    T v;
    std::memcpy(&v, p, sizeof v);
    if ((std::endian::native == std::endian::little) != little_endian) v = std::byteswap(v);
    return v;
}

// Decodes and checks the entry at pos; limit is the end of the used part of the file.
result<hsperf_entry> read_entry(std::span<const std::byte> bytes, std::uint64_t pos, std::uint64_t limit, bool le,
                                std::uint32_t index) {
    auto which = [index] { return "hsperfdata entry " + std::to_string(index); };  // built only on failure
    if (pos + hsperf_entry::header_size > limit)
        return fail(error_code::out_of_bounds, which() + ": header runs past the used bytes", pos);
    const std::byte* h = bytes.data() + pos;
    const std::int32_t length = load<std::int32_t>(h, le);
    const std::int32_t name_offset = load<std::int32_t>(h + 4, le);
    const std::int32_t vector_length = load<std::int32_t>(h + 8, le);
    const char type = static_cast<char>(h[12]);
    const std::int32_t data_offset = load<std::int32_t>(h + 16, le);
    if (length < static_cast<std::int32_t>(hsperf_entry::header_size) ||
        pos + static_cast<std::uint64_t>(length) > limit)
        return fail(error_code::out_of_bounds,
                    which() + ": length " + std::to_string(length) + " runs past the used bytes or below its header",
                    pos);
    const auto len = static_cast<std::uint64_t>(length);
    if (name_offset < static_cast<std::int32_t>(hsperf_entry::header_size) ||
        static_cast<std::uint64_t>(name_offset) >= len)
        return fail(error_code::out_of_bounds,
                    which() + ": name offset " + std::to_string(name_offset) + " outside the entry", pos);
    const char* name_begin = reinterpret_cast<const char*>(h + name_offset);
    const auto name_room = static_cast<std::size_t>(len - static_cast<std::uint64_t>(name_offset));
    const void* nul = std::memchr(name_begin, 0, name_room);
    if (nul == nullptr) return fail(error_code::bad_value, which() + ": name not terminated within the entry", pos);
    std::string_view name(name_begin, static_cast<std::size_t>(static_cast<const char*>(nul) - name_begin));
    if (name.empty()) return fail(error_code::bad_value, which() + ": empty name", pos);
    const std::size_t element = hsperf_type_size(type);
    if (element == 0)
        return fail(
            error_code::bad_value,
            which() + " (" + std::string(name) + "): unknown data type " + hex_id(static_cast<unsigned char>(type)),
            pos);
    if (vector_length < 0)
        return fail(error_code::bad_value, which() + " (" + std::string(name) + "): negative vector length", pos);
    if (data_offset < static_cast<std::int32_t>(hsperf_entry::header_size) ||
        static_cast<std::uint64_t>(data_offset) > len)
        return fail(error_code::out_of_bounds, which() + " (" + std::string(name) + "): data offset outside the entry",
                    pos);
    const std::uint64_t count = vector_length == 0 ? 1 : static_cast<std::uint64_t>(vector_length);
    const std::uint64_t data_size = count * element;  // below 2^31 * 8: no overflow
    if (static_cast<std::uint64_t>(data_offset) + data_size > len)
        return fail(error_code::out_of_bounds, which() + " (" + std::string(name) + "): data runs past the entry", pos);
    hsperf_entry e;
    e.offset = pos;
    e.length = static_cast<std::uint32_t>(length);
    e.name = name;
    e.type = type;
    e.flags = static_cast<std::uint8_t>(h[13]);
    e.units = static_cast<std::uint8_t>(h[14]);
    e.variability = static_cast<std::uint8_t>(h[15]);
    e.vector_length = static_cast<std::uint32_t>(vector_length);
    e.data = bytes.subspan(static_cast<std::size_t>(pos) + static_cast<std::size_t>(data_offset),
                           static_cast<std::size_t>(data_size));
    e.little_endian = le;
    return e;
}

}  // namespace

std::size_t hsperf_type_size(char type) {
    switch (type) {
    case 'B':
    case 'Z': return 1;
    case 'C':
    case 'S': return 2;
    case 'I':
    case 'F': return 4;
    case 'J':
    case 'D': return 8;
    default: return 0;
    }
}

std::optional<std::int64_t> hsperf_entry::long_value() const {
    if (type != 'J' || vector_length != 0 || data.size() < 8) return std::nullopt;
    return load<std::int64_t>(data.data(), little_endian);
}

std::optional<std::string_view> hsperf_entry::string_value() const {
    if (!is_string()) return std::nullopt;
    std::string_view all(reinterpret_cast<const char*>(data.data()), data.size());
    return all.substr(0, all.find('\0'));
}

hsperf_snapshot::hsperf_snapshot(std::vector<hsperf_entry> entries, bool complete)
    : entries_(std::move(entries)), complete_(complete) {
    std::stable_sort(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
}

const hsperf_entry* hsperf_snapshot::find(std::string_view name) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                               [](const hsperf_entry& e, std::string_view n) { return e.name < n; });
    return it != entries_.end() && it->name == name ? &*it : nullptr;
}

std::optional<std::int64_t> hsperf_snapshot::long_value(std::string_view name) const {
    const hsperf_entry* e = find(name);
    return e ? e->long_value() : std::nullopt;
}

std::optional<std::string_view> hsperf_snapshot::string_value(std::string_view name) const {
    const hsperf_entry* e = find(name);
    return e ? e->string_value() : std::nullopt;
}

std::span<const hsperf_entry> hsperf_snapshot::with_prefix(std::string_view prefix) const {
    auto first = std::lower_bound(entries_.begin(), entries_.end(), prefix,
                                  [](const hsperf_entry& e, std::string_view p) { return e.name < p; });
    auto last = first;
    while (last != entries_.end() && last->name.starts_with(prefix)) ++last;
    return {first, last};
}

result<hsperf_data> hsperf_data::parse(std::span<const std::byte> bytes) {
    if (bytes.size() < hsperf_prologue::size)
        return fail(error_code::out_of_bounds,
                    "hsperfdata of " + std::to_string(bytes.size()) + " bytes is shorter than its 32-byte prologue", 0);
    if (std::memcmp(bytes.data(), magic, sizeof magic) != 0)
        return fail(error_code::bad_magic,
                    "not an hsperfdata file (magic " + hex_id(load<std::uint32_t>(bytes.data(), false)) + ")", 0);
    const auto order = static_cast<std::uint8_t>(bytes[4]);
    if (order > 1)
        return fail(error_code::bad_header, "hsperfdata byte order " + std::to_string(order) + " is neither 0 nor 1",
                    4);
    hsperf_data data(bytes);
    hsperf_prologue p = data.prologue();
    if (p.major != 2)
        return fail(error_code::unsupported,
                    "hsperfdata version " + std::to_string(p.major) + "." + std::to_string(p.minor) +
                        " (this reader knows 2.x)",
                    5);
    if (p.entry_offset < hsperf_prologue::size || p.entry_offset > bytes.size())
        return fail(error_code::out_of_bounds,
                    "hsperfdata entry offset " + std::to_string(p.entry_offset) + " outside the file of " +
                        std::to_string(bytes.size()) + " bytes",
                    24);
    return data;
}

hsperf_prologue hsperf_data::prologue() const {
    const std::byte* b = bytes_.data();
    hsperf_prologue p;
    p.little_endian = static_cast<std::uint8_t>(b[4]) == 1;
    p.major = static_cast<std::uint8_t>(b[5]);
    p.minor = static_cast<std::uint8_t>(b[6]);
    p.accessible = static_cast<std::uint8_t>(b[7]) != 0;
    p.used = load<std::uint32_t>(b + 8, p.little_endian);
    p.overflow = load<std::uint32_t>(b + 12, p.little_endian);
    p.mod_time_stamp = load<std::int64_t>(b + 16, p.little_endian);
    p.entry_offset = load<std::uint32_t>(b + 24, p.little_endian);
    p.num_entries = load<std::uint32_t>(b + 28, p.little_endian);
    return p;
}

result<std::vector<hsperf_entry>> hsperf_data::read_entries(bool& complete) const {
    const hsperf_prologue p = prologue();
    if (p.used > bytes_.size())
        return fail(
            error_code::out_of_bounds,
            "hsperfdata claims " + std::to_string(p.used) + " bytes used of a file of " + std::to_string(bytes_.size()),
            8);
    if (p.entry_offset < hsperf_prologue::size || p.entry_offset > p.used)
        return fail(error_code::out_of_bounds,
                    "hsperfdata entry offset " + std::to_string(p.entry_offset) + " outside the " +
                        std::to_string(p.used) + " bytes used",
                    24);
    const std::uint64_t limit = p.used;
    std::vector<hsperf_entry> out;
    out.reserve(std::min<std::size_t>(p.num_entries, (limit - p.entry_offset) / hsperf_entry::header_size));
    std::uint64_t pos = p.entry_offset;
    complete = true;
    // Each entry takes at least a header, so even a huge count stops at the used bytes.
    for (std::uint32_t i = 0; i < p.num_entries; ++i) {
        // The JVM counts an entry, then fills it in: no bytes yet, or a zero length, is one in the making.
        if (pos == limit || (pos + 4 <= limit && load<std::int32_t>(bytes_.data() + pos, p.little_endian) == 0)) {
            complete = false;
            break;
        }
        auto e = read_entry(bytes_, pos, limit, p.little_endian, i);
        if (!e) return std::unexpected(e.error());
        pos += e->length;
        out.push_back(*e);
    }
    return out;
}

result<std::vector<hsperf_entry>> hsperf_data::entries() const {
    bool complete = true;
    return read_entries(complete);
}

result<hsperf_snapshot> hsperf_data::snapshot() const {
    bool complete = true;
    auto list = read_entries(complete);
    if (!list) return std::unexpected(list.error());
    return hsperf_snapshot(std::move(*list), complete);
}

}  // namespace hsperf
}  // namespace heapd
