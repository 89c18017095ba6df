#include "formats/memory/jcmd_figures.h"

#include <charconv>
#include <limits>

#include "formats/memory/internal/text_lines.h"

namespace heapd {
inline namespace memory {
namespace {

// A size as HotSpot prints it ("1439K", "30M", "65536KB", "12B", "7"), from the start of text; its
// length in used. Nothing on overflow or no digits.
std::optional<std::int64_t> size_at(std::string_view text, std::size_t& used) {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || value < 0) return std::nullopt;
    std::size_t at = end - text.data();
    int shift = 0;
    if (at < text.size()) {
        switch (text[at]) {
        case 'K':
            shift = 10;
            ++at;
            break;
        case 'M':
            shift = 20;
            ++at;
            break;
        case 'G':
            shift = 30;
            ++at;
            break;
        default: break;
        }
        if (at < text.size() && text[at] == 'B') ++at;
    }
    if (value > (std::numeric_limits<std::int64_t>::max() >> shift)) return std::nullopt;
    used = at;
    return value << shift;
}

// The size after `key` in line ("committed=" or "used "), nothing when the key is absent.
std::optional<std::int64_t> size_after(std::string_view line, std::string_view key) {
    const std::size_t at = line.find(key);
    if (at == std::string_view::npos) return std::nullopt;
    std::size_t used = 0;
    return size_at(line.substr(at + key.size()), used);
}

std::optional<std::uint64_t> hex_at(std::string_view text, std::size_t& at) {
    at = text.find("0x", at);
    if (at == std::string_view::npos) return std::nullopt;
    std::uint64_t value = 0;
    const char* first = text.data() + at + 2;
    const auto [end, ec] = std::from_chars(first, text.data() + text.size(), value, 16);
    if (ec != std::errc{}) return std::nullopt;
    at = end - text.data();
    return value;
}

// The first and last address of a "[0x..., 0x..., 0x...)" group in line, if it has one.
std::optional<address_range> bracket_range(std::string_view line) {
    const std::size_t open = line.find("[0x");
    const std::size_t close = line.find_first_of(")]", open == std::string_view::npos ? 0 : open);
    if (open == std::string_view::npos || close == std::string_view::npos) return std::nullopt;
    const std::string_view group = line.substr(open, close - open);
    std::size_t at = 0;
    const auto first = hex_at(group, at);
    std::optional<std::uint64_t> last;
    while (auto next = hex_at(group, at)) last = next;
    if (!first || !last || *last <= *first) return std::nullopt;
    return address_range{*first, *last};
}

std::string_view trimmed(std::string_view s) {
    const std::size_t start = s.find_first_not_of(" \t(-");
    if (start == std::string_view::npos) return {};
    s.remove_prefix(start);
    return s.substr(0, s.find_last_not_of(" \t)") + 1);
}

}  // namespace

heap_info_figures parse_heap_info(std::string_view text) {
    heap_info_figures f;
    text_lines all(text);
    bool in_metaspace = false;
    for (std::string_view line; all.next(line);) {
        const std::string_view t = trimmed(line);
        if (t.starts_with("Metaspace") && t.find("used ") != std::string_view::npos) {
            in_metaspace = true;
            f.metaspace_used = size_after(t, "used ");
            f.metaspace_committed = size_after(t, "committed ");
            f.metaspace_reserved = size_after(t, "reserved ");
        } else if (t.starts_with("class space") && t.find("used ") != std::string_view::npos) {
            f.class_space_used = size_after(t, "used ");
            f.class_space_committed = size_after(t, "committed ");
        } else if (!in_metaspace) {
            // "garbage-first heap total 65536K, used 1439K [...)"; one line per generation for Serial
            // and Parallel ("def new generation total 4928K, used 1029K [...)"), summed.
            if (t.find("total ") != std::string_view::npos)
                if (const auto used = size_after(t, "used ")) f.heap_used = f.heap_used.value_or(0) + *used;
            if (const auto r = bracket_range(line))
                f.heap = f.heap ? address_range{std::min(f.heap->begin, r->begin), std::max(f.heap->end, r->end)} : *r;
        }
    }
    return f;
}

std::vector<address_range> parse_code_heaps(std::string_view text) {
    std::vector<address_range> out;
    text_lines all(text);
    for (std::string_view line; all.next(line);)
        if (trimmed(line).starts_with("bounds "))
            if (const auto r = bracket_range(line)) out.push_back(*r);
    return out;
}

const nmt_category* nmt_summary::find(std::string_view name) const {
    for (const nmt_category& c : categories)
        if (c.name == name) return &c;
    return nullptr;
}

std::optional<nmt_summary> parse_nmt_summary(std::string_view text) {
    nmt_summary s;
    bool seen_total = false;
    std::optional<std::int64_t>* pending = nullptr;  // Metadata: or Class space: names the next line
    text_lines all(text);
    for (std::string_view line; all.next(line);) {
        const std::string_view t = trimmed(line);
        if (t.starts_with("Total: reserved=")) {
            seen_total = true;
            s.reserved = size_after(t, "reserved=").value_or(0);
            s.committed = size_after(t, "committed=").value_or(0);
        } else if (line.starts_with("-") && t.find("(reserved=") != std::string_view::npos) {
            nmt_category c;
            c.name = std::string(trimmed(t.substr(0, t.find("(reserved="))));
            c.reserved = size_after(t, "reserved=").value_or(0);
            c.committed = size_after(t, "committed=").value_or(0);
            s.categories.push_back(std::move(c));
        } else if (t.starts_with("thread #") || t.starts_with("threads #")) {
            s.threads = size_after(t, "#");
        } else if (t.starts_with("stack: reserved=")) {
            s.stack_committed = size_after(t, "committed=");
        } else if (t.starts_with("Metadata:")) {
            pending = &s.metadata_committed;
            continue;
        } else if (t.starts_with("Class space:")) {
            pending = &s.class_space_committed;
            continue;
        } else if (pending != nullptr && t.starts_with("reserved=")) {
            *pending = size_after(t, "committed=");
        }
        pending = nullptr;
    }
    if (!seen_total) return std::nullopt;
    return s;
}

}  // namespace memory
}  // namespace heapd
