#include "formats/analysis/duplicate_strings.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

#include "formats/hprof/java_strings.h"

namespace heapd {
namespace {

constexpr std::uint32_t none = ~std::uint32_t{0};

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
    if (value_id == 0) return;
    auto [slot, inserted] = array_of_.insert(value_id, static_cast<std::uint32_t>(arrays_.size()));
    if (inserted) arrays_.emplace_back();
    strings_.push_back({*slot, string_size, coder});
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

std::vector<duplicate_strings::group> duplicate_strings::groups(const vm_layout& vm, waste_report& r) const {
    // Strings whose value array was found, keyed by contents and sorted so that equal keys, and in
    // them each array's Strings, lie together. The String's size and coder travel in the entry
    // (size << 8 | coder), so that walking the sorted entries does not jump about the Strings.
    struct entry {
        std::uint64_t key;
        std::uint32_t array, size_coder;
        std::uint32_t size() const { return size_coder >> 8; }
        std::uint8_t coder() const { return static_cast<std::uint8_t>(size_coder); }
    };
    std::vector<entry> entries;
    entries.reserve(strings_.size());
    for (const string_rec& s : strings_) {
        const array_rec& a = arrays_[s.array];
        if (a.type == 0) continue;
        entries.push_back({fmix(a.hash ^ (std::uint64_t{s.coder} << 8 | a.type)), s.array,
                           std::min<std::uint32_t>(s.size, 0xFFFFFF) << 8 | s.coder});
    }
    std::sort(entries.begin(), entries.end(), [](const entry& x, const entry& y) {
        return x.key != y.key ? x.key < y.key : x.array != y.array ? x.array < y.array : x.size_coder < y.size_coder;
    });
    auto same_contents = [&](const array_rec& a, std::uint8_t ac, const array_rec& b, std::uint8_t bc) {
        return ac == bc && a.type == b.type && a.bytes == b.bytes && std::memcmp(a.data, b.data, a.bytes) == 0;
    };
    // Per distinct contents in one run of equal keys (a hash collision makes more than one).
    struct open_group {
        std::uint32_t array, string_size;
        std::uint8_t coder;
        std::uint32_t last_array = none;
        std::uint64_t copies = 0, arrays = 0;
    };
    std::vector<group> out;
    std::vector<open_group> open;
    auto close = [&] {
        for (const open_group& g : open) {
            if (g.copies < 2) continue;
            const array_rec& a = arrays_[g.array];
            std::uint64_t saving =
                (g.copies - 1) * g.string_size + (g.arrays - 1) * array_shallow_size(vm, a.type, a.length());
            out.push_back({saving, g.copies, g.array, g.coder});
            ++r.duplicate_string_groups;
            r.duplicate_strings += g.copies;
            r.duplicate_string_saving += saving;
        }
        open.clear();
    };
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const entry& e = entries[i];
        if (i > 0 && e.key != entries[i - 1].key) close();
        auto g = std::find_if(open.begin(), open.end(), [&](const open_group& x) {
            return x.array == e.array ? x.coder == e.coder()
                                      : same_contents(arrays_[x.array], x.coder, arrays_[e.array], e.coder());
        });
        if (g == open.end()) {
            open.push_back({e.array, e.size(), e.coder()});
            g = open.end() - 1;
        }
        ++g->copies;
        // A group's Strings of one array are neighbours: the entries are sorted by array.
        if (g->last_array != e.array) ++g->arrays;
        g->last_array = e.array;
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
        const array_rec &a = arrays_[x.array], &b = arrays_[y.array];
        if (a.bytes != b.bytes) return a.bytes < b.bytes;
        if (int c = std::memcmp(a.data, b.data, a.bytes); c != 0) return c < 0;
        return std::pair(a.type, x.coder) < std::pair(b.type, y.coder);
    };
    std::size_t keep = top == 0 ? all.size() : std::min<std::size_t>(top, all.size());
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(), before);
    for (std::size_t i = 0; i < keep; ++i) {
        const array_rec& a = arrays_[all[i].array];
        primitive_array_view view{0, 0, 0, a.length(), a.type, {a.data, a.bytes}};
        std::uint64_t chars = a.type == 8 && all[i].coder == 0 ? a.bytes : a.bytes / 2;
        r.duplicate_strings_top.push_back(
            {display_java_string(view, all[i].coder, string_display_chars), chars, all[i].copies, all[i].saving});
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

}  // namespace heapd
