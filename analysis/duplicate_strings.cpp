#include "analysis/duplicate_strings.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <tuple>
#include <utility>

#include "formats/hprof/java_strings.h"

namespace heapd {
inline namespace analysis {
namespace {

constexpr std::uint32_t no_array = ~std::uint32_t{0};

std::uint64_t fmix(std::uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    return k ^ (k >> 33);
}

std::uint64_t hash_bytes(const std::byte* p, std::size_t n) {
    std::uint64_t h = fmix(n + 0x9E3779B97F4A7C15ull);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, p + i, 8);
        h = std::rotl(h ^ fmix(w), 29) * 0x9E3779B97F4A7C15ull;
    }
    std::uint64_t tail = 0;
    if (n > i) std::memcpy(&tail, p + i, n - i);
    return fmix(h ^ fmix(tail ^ (std::uint64_t{n} << 56)));
}

}  // namespace

void duplicate_strings::reserve(std::size_t strings) {
    strings_.reserve(strings);
    arrays_.reserve(strings);
}

void duplicate_strings::add_string(std::uint64_t value_id, std::uint8_t coder, std::uint32_t string_size) {
    add_string(value_id, coder, string_size, 0, whole_array);
}

void duplicate_strings::add_string(std::uint64_t value_id, std::uint8_t coder, std::uint32_t string_size,
                                   std::uint32_t offset, std::uint32_t count) {
    if (value_id == 0) return;
    auto [slot, inserted] = array_of_.insert(value_id, static_cast<std::uint32_t>(arrays_.size()));
    if (inserted) arrays_.emplace_back();
    strings_.push_back({*slot, string_size, offset, count, coder});
}

std::span<const std::byte> duplicate_strings::bytes_of(const chars& c) const {
    return {arrays_[c.array].data + c.begin, c.bytes};
}

bool duplicate_strings::add_array(const primitive_array_view& v) {
    const std::uint32_t* i = array_of_.find(v.id);
    if (i == nullptr) return false;
    array_rec& a = arrays_[*i];
    a.data = v.data.data();
    a.bytes = static_cast<std::uint32_t>(v.data.size());
    // Only byte[] and char[] hold strings; a value without data (Android) is left out.
    bool text = (v.type == 8 || v.type == 5) && v.data.size() == std::uint64_t{v.length} * value_size(v.type, 8);
    a.type = text ? v.type : 0;
    a.hash = text ? hash_bytes(a.data, a.bytes) : 0;
    return true;
}

big_vector<duplicate_strings::keyed_string> duplicate_strings::sorted_strings() const {
    big_vector<keyed_string> entries;
    entries.reserve(strings_.size());
    for (const string_rec& s : strings_) {
        const array_rec& a = arrays_[s.array];
        if (a.type == 0) continue;
        std::uint32_t begin = 0, bytes = a.bytes;
        std::uint64_t hash = a.hash;
        if (s.count != whole_array) {
            // A range in characters: one byte each only in a Latin-1 byte[].
            const std::uint64_t unit = a.type == 8 && s.coder == 0 ? 1 : 2;
            if ((std::uint64_t{s.offset} + s.count) * unit > a.bytes) continue;
            begin = static_cast<std::uint32_t>(s.offset * unit);
            bytes = static_cast<std::uint32_t>(s.count * unit);
            if (bytes != a.bytes) hash = hash_bytes(a.data + begin, bytes);
        }
        entries.push_back({fmix(hash ^ (std::uint64_t{s.coder} << 8 | a.type)), s.array,
                           std::min<std::uint32_t>(s.size, 0xFFFFFF) << 8 | s.coder, begin, bytes});
    }
    std::sort(entries.begin(), entries.end(), [](const keyed_string& x, const keyed_string& y) {
        return std::tie(x.key, x.array, x.begin, x.bytes, x.size_coder) <
               std::tie(y.key, y.array, y.begin, y.bytes, y.size_coder);
    });
    return entries;
}

std::vector<duplicate_strings::group> duplicate_strings::groups(const vm_layout& vm, waste_report& r) const {
    const big_vector<keyed_string> entries = sorted_strings();
    auto same_contents = [&](const chars& x, const chars& y) {
        if (x.coder != y.coder || arrays_[x.array].type != arrays_[y.array].type || x.bytes != y.bytes) return false;
        return (x.array == y.array && x.begin == y.begin) ||
               std::memcmp(bytes_of(x).data(), bytes_of(y).data(), x.bytes) == 0;
    };
    // Per distinct contents in one run of equal keys (a hash collision makes more than one).
    struct open_group {
        chars contents;
        std::uint32_t string_size;
        std::uint32_t last_whole = no_array;  // the last array a String of the group held whole
        std::uint64_t copies = 0, arrays = 0;
    };
    std::vector<group> out;
    std::vector<open_group> open;
    auto close = [&] {
        for (const open_group& g : open) {
            if (g.copies < 2) continue;
            const array_rec& a = arrays_[g.contents.array];
            std::uint64_t saving = (g.copies - 1) * g.string_size;
            // Arrays held whole hold the same contents, so all have a's size (a itself may be held in part).
            if (g.arrays > 1)
                saving += (g.arrays - 1) *
                          array_shallow_size(vm, a.type, a.type == 5 ? g.contents.bytes / 2 : g.contents.bytes);
            out.push_back({saving, g.copies, g.contents});
            ++r.duplicate_string_groups;
            r.duplicate_strings += g.copies;
            r.duplicate_string_saving += saving;
        }
        open.clear();
    };
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const keyed_string& e = entries[i];
        if (i > 0 && e.key != entries[i - 1].key) close();
        auto g = std::find_if(open.begin(), open.end(),
                              [&](const open_group& x) { return same_contents(x.contents, e.contents()); });
        if (g == open.end()) {
            open.push_back({e.contents(), e.size()});
            g = open.end() - 1;
        }
        ++g->copies;
        // A group's Strings of one array are neighbours: the entries are sorted by array.
        if (e.bytes == arrays_[e.array].bytes && g->last_whole != e.array) {
            ++g->arrays;
            g->last_whole = e.array;
        }
    }
    close();
    return out;
}

void duplicate_strings::finish(const vm_layout& vm, unsigned top, waste_report& r) const {
    std::vector<group> all = groups(vm, r);
    // Biggest saving first; ties by more copies, then by contents, so the order never depends on ids.
    auto before = [&](const group& x, const group& y) {
        if (x.saving != y.saving) return x.saving > y.saving;
        if (x.copies != y.copies) return x.copies > y.copies;
        std::span<const std::byte> a = bytes_of(x.contents), b = bytes_of(y.contents);
        if (a.size() != b.size()) return a.size() < b.size();
        if (int c = std::memcmp(a.data(), b.data(), a.size()); c != 0) return c < 0;
        return std::pair(arrays_[x.contents.array].type, x.contents.coder) <
               std::pair(arrays_[y.contents.array].type, y.contents.coder);
    };
    std::size_t keep = top == 0 ? all.size() : std::min<std::size_t>(top, all.size());
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(), before);
    for (std::size_t i = 0; i < keep; ++i) {
        const chars& c = all[i].contents;
        const std::uint8_t type = arrays_[c.array].type;
        const std::uint32_t chars_n = type == 8 && c.coder == 0 ? c.bytes : c.bytes / 2;
        primitive_array_view view{0, 0, 0, type == 5 ? chars_n : c.bytes, type, bytes_of(c)};
        r.duplicate_strings_top.push_back(
            {display_java_string(view, c.coder, string_display_chars), chars_n, all[i].copies, all[i].saving});
    }
}

std::string display_java_string(const primitive_array_view& value, std::uint8_t coder, unsigned max_chars) {
    std::size_t chars = value.type == 8 && coder == 0 ? value.data.size() : value.data.size() / 2;
    std::string utf8 = decode_java_string(value, coder, max_chars), out;
    out.reserve(utf8.size() + 8);
    static constexpr char hex[] = "0123456789abcdef";
    for (char ch : utf8) {
        auto u = static_cast<unsigned char>(ch);
        switch (ch) {
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        default:
            if (u < 0x20 || u == 0x7F)
                out += std::string("\\u00") + hex[u >> 4] + hex[u & 15];
            else
                out += ch;
        }
    }
    if (chars > max_chars) out += "...";
    return out;
}

}  // namespace analysis
}  // namespace heapd
