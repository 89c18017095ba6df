#include "analysis/duplicate_strings.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <tuple>
#include <utility>

#include "analysis/radix_sort.h"
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

void duplicate_strings::reserve(std::size_t strings, std::size_t arrays) {
    strings_.reserve(strings);
    arrays_.reserve(arrays);
}

void duplicate_strings::add_string(std::uint64_t value_id, std::uint8_t coder, std::uint32_t string_size) {
    add_string(value_id, coder, string_size, 0, whole_array);
}

void duplicate_strings::add_string(std::uint64_t value_id, std::uint8_t coder, std::uint32_t string_size,
                                   std::uint32_t offset, std::uint32_t count) {
    if (value_id == 0) return;
    std::uint32_t range = whole_array;
    if (count != whole_array) {
        range = static_cast<std::uint32_t>(ranges_.size());
        ranges_.emplace_back(offset, count);
    }
    strings_.push_back({value_id, std::min<std::uint32_t>(string_size, 0xFFFFFF) << 8 | coder, range});
    sorted_ = false;
}

std::span<const std::byte> duplicate_strings::bytes_of(const chars& c) const {
    return {arrays_[c.array].data + c.begin, c.bytes};
}

void duplicate_strings::add_array(const primitive_array_view& v, bool zero) {
    // Only byte[] and char[] hold strings; a value without data (Android) is left out.
    if ((v.type != 8 && v.type != 5) || v.data.size() != std::uint64_t{v.length} * value_size(v.type, 8)) return;
    arrays_.push_back({v.id, v.data.data(), static_cast<std::uint32_t>(v.data.size()), v.type, zero});
    sorted_ = false;
}

void duplicate_strings::sort_by_id() const {
    if (sorted_) return;
    radix_sort(strings_, [](const string_rec& s) { return s.value; });
    radix_sort(arrays_, [](const array_rec& a) { return a.id; });
    sorted_ = true;
}

template <class Each>
void duplicate_strings::join(Each&& each) const {
    sort_by_id();
    std::size_t a = 0;
    for (const string_rec& s : strings_) {
        while (a < arrays_.size() && arrays_[a].id < s.value) ++a;
        if (a == arrays_.size()) return;
        // An id offered twice (a damaged dump): the first array in the dump holds it (the sort is stable).
        if (arrays_[a].id == s.value) each(s, static_cast<std::uint32_t>(a));
    }
}

std::array<std::pair<std::uint64_t, std::uint64_t>, 12> duplicate_strings::zero_values(const vm_layout& vm) const {
    std::array<std::pair<std::uint64_t, std::uint64_t>, 12> out{};
    std::uint32_t last = no_array;
    join([&](const string_rec&, std::uint32_t a) {
        if (a == last) return;
        last = a;
        const array_rec& r = arrays_[a];
        if (!r.zero) return;
        ++out[r.type].first;
        out[r.type].second += array_shallow_size(vm, r.type, r.type == 5 ? r.bytes / 2 : r.bytes);
    });
    return out;
}

big_vector<duplicate_strings::keyed_string> duplicate_strings::sorted_strings() const {
    big_vector<keyed_string> entries;
    entries.reserve(strings_.size());
    std::uint32_t hashed = no_array, held_whole = no_array;
    std::uint64_t array_hash = 0;
    join([&](const string_rec& s, std::uint32_t array) {
        const array_rec& a = arrays_[array];
        const auto coder = static_cast<std::uint8_t>(s.size_coder);
        if (hashed != array) {  // each array's Strings are neighbours: its bytes are hashed once
            hashed = array;
            array_hash = hash_bytes(a.data, a.bytes);
        }
        std::uint32_t begin = 0, bytes = a.bytes;
        std::uint64_t hash = array_hash;
        if (s.range != whole_array) {
            // A range in characters: one byte each only in a Latin-1 byte[].
            const auto [offset, count] = ranges_[s.range];
            const std::uint64_t unit = a.type == 8 && coder == 0 ? 1 : 2;
            if ((std::uint64_t{offset} + count) * unit > a.bytes) return;
            begin = static_cast<std::uint32_t>(offset * unit);
            bytes = static_cast<std::uint32_t>(count * unit);
            if (bytes != a.bytes) hash = hash_bytes(a.data + begin, bytes);
        }
        std::uint8_t kind = a.type;
        if (bytes == a.bytes && held_whole != array) {
            held_whole = array;
            kind |= keyed_string::first_whole;
        }
        std::uint64_t prefix = 0;
        std::memcpy(&prefix, a.data + begin, std::min<std::uint32_t>(bytes, 8));
        entries.push_back({fmix(hash ^ (std::uint64_t{coder} << 8 | a.type)), prefix, array, begin, bytes,
                           static_cast<std::uint16_t>(std::min<std::uint32_t>(s.size_coder >> 8, 0xFFFF)), coder,
                           kind});
    });
    // By the key's top bits into buckets, in place (American flag sort: each entry swapped into the
    // next free slot of its bucket), then each bucket by key where it is not in order yet (a bucket
    // of one key, the copies of one string, is): equal keys together, without a second buffer.
    auto before = [](const keyed_string& x, const keyed_string& y) { return x.key < y.key; };
    // About 64 entries a bucket, at most 2^10 buckets: more would scatter the entries over more pages
    // at once than the TLB holds (measured: 2^16 buckets made the waste report 30% slower).
    unsigned bits = 1;
    while (bits < 10 && (std::size_t{1} << (bits + 6)) < entries.size()) ++bits;
    const unsigned shift = 64 - bits;
    std::vector<std::size_t> start((std::size_t{1} << bits) + 1);
    for (const keyed_string& e : entries) ++start[(e.key >> shift) + 1];
    for (std::size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
    std::vector<std::size_t> next(start.begin(), start.end() - 1);
    for (std::size_t b = 0; b + 1 < start.size(); ++b)
        while (next[b] < start[b + 1]) {
            const std::size_t home = entries[next[b]].key >> shift;
            if (home == b)
                ++next[b];
            else
                std::swap(entries[next[b]], entries[next[home]++]);
        }
    for (std::size_t b = 0; b + 1 < start.size(); ++b) {
        const auto first = entries.begin() + static_cast<std::ptrdiff_t>(start[b]),
                   last = entries.begin() + static_cast<std::ptrdiff_t>(start[b + 1]);
        if (!std::is_sorted(first, last, before)) std::sort(first, last, before);
    }
    return entries;
}

std::vector<duplicate_strings::group> duplicate_strings::groups(const vm_layout& vm, waste_report& r) const {
    const big_vector<keyed_string> entries = sorted_strings();
    auto same_contents = [&](const chars& x, const chars& y) {
        if (x.coder != y.coder || x.type != y.type || x.bytes != y.bytes || x.prefix != y.prefix) return false;
        return x.bytes <= 8 || (x.array == y.array && x.begin == y.begin) ||
               std::memcmp(bytes_of(x).data(), bytes_of(y).data(), x.bytes) == 0;
    };
    // Per distinct contents in one run of equal keys (a hash collision makes more than one). The
    // entries of a run come in no particular order: what a group reports depends on none (its
    // contents are the first array's, its Strings' size the smallest).
    struct open_group {
        chars contents;
        std::uint32_t string_size;
        std::uint64_t copies = 0, arrays = 0;
    };
    std::vector<group> out;
    std::vector<open_group> open;
    auto close = [&] {
        for (const open_group& g : open) {
            if (g.copies < 2) continue;
            std::uint64_t saving = (g.copies - 1) * g.string_size;
            // Arrays held whole hold the same contents, so all have the same size.
            if (g.arrays > 1)
                saving +=
                    (g.arrays - 1) * array_shallow_size(vm, g.contents.type,
                                                        g.contents.type == 5 ? g.contents.bytes / 2 : g.contents.bytes);
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
        const chars c = e.contents();
        auto g =
            std::find_if(open.begin(), open.end(), [&](const open_group& x) { return same_contents(x.contents, c); });
        if (g == open.end()) {
            open.push_back({c, e.size});
            g = open.end() - 1;
        }
        ++g->copies;
        g->string_size = std::min<std::uint32_t>(g->string_size, e.size);
        if (std::pair(c.array, c.begin) < std::pair(g->contents.array, g->contents.begin)) g->contents = c;
        // Every String holding an array whole is in its group: the array counts once, at the first.
        if (e.kind & keyed_string::first_whole) ++g->arrays;
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
        return std::pair(x.contents.type, x.contents.coder) < std::pair(y.contents.type, y.contents.coder);
    };
    std::size_t keep = top == 0 ? all.size() : std::min<std::size_t>(top, all.size());
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(), before);
    for (std::size_t i = 0; i < keep; ++i) {
        const chars& c = all[i].contents;
        const std::uint8_t type = c.type;
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
