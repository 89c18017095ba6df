#include "formats/memory/smaps.h"

#include <charconv>

#include "formats/memory/internal/text_lines.h"

namespace heapd {
inline namespace memory {
namespace {

// Splits off the next field separated by spaces.
std::string_view next_field(std::string_view& rest) {
    const std::size_t start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos) {
        rest = {};
        return {};
    }
    rest.remove_prefix(start);
    const std::size_t end = rest.find(' ');
    const std::string_view field = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
    return field;
}

bool parse_hex(std::string_view text, std::uint64_t& value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
    return ec == std::errc{} && end == text.data() + text.size() && !text.empty();
}

// A mapping's header: "7f15c5c00000-7f15c5e51000 r--p 00000000 08:01 1234   /path"; the path may
// hold spaces.
bool parse_header(std::string_view line, mapping& m) {
    std::string_view rest = line;
    const std::string_view range = next_field(rest);
    const std::size_t dash = range.find('-');
    if (dash == std::string_view::npos || !parse_hex(range.substr(0, dash), m.range.begin) ||
        !parse_hex(range.substr(dash + 1), m.range.end) || m.range.end < m.range.begin)
        return false;
    const std::string_view perms = next_field(rest);
    if (perms.size() != 4) return false;
    perms.copy(m.perms, 4);
    for (int i = 0; i < 3; ++i)
        if (next_field(rest).empty()) return false;  // offset, device, inode
    const std::size_t path = rest.find_first_not_of(' ');
    m.path = path == std::string_view::npos ? std::string() : std::string(rest.substr(path));
    return true;
}

// A header line starts with the range's lowercase hex digits; a field line with its capitalised key.
bool is_header(std::string_view line) {
    return !line.empty() && ((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f'));
}

// "Rss:   1234 kB" → bytes; false when the value is no number of kB.
bool field_bytes(std::string_view line, std::size_t colon, std::uint64_t& bytes) {
    std::string_view rest = line.substr(colon + 1);
    const std::string_view number = next_field(rest);
    const std::string_view unit = next_field(rest);
    std::uint64_t kib = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), kib);
    if (ec != std::errc{} || end != number.data() + number.size() || unit != "kB" || kib > (~std::uint64_t{0} >> 10))
        return false;
    bytes = kib << 10;
    return true;
}

}  // namespace

result<std::vector<mapping>> parse_smaps(std::string_view text) {
    std::vector<mapping> out;
    text_lines all(text);
    std::string_view line;
    for (std::size_t number = 1; all.next(line); ++number) {
        const auto where = "smaps line " + std::to_string(number);
        if (is_header(line)) {
            if (out.size() == max_mappings)
                return fail(error_code::unsupported, "more than " + std::to_string(max_mappings) + " mappings");
            if (!parse_header(line, out.emplace_back()))
                return fail(error_code::bad_value, where + ": not a mapping: " + std::string(line.substr(0, 80)));
            continue;
        }
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos) {
            if (line.empty()) continue;
            return fail(error_code::bad_value, where + ": neither a mapping nor a field");
        }
        const std::string_view key = line.substr(0, colon);
        std::uint64_t* field = nullptr;
        if (!out.empty()) {
            if (key == "Rss")
                field = &out.back().rss;
            else if (key == "Anonymous")
                field = &out.back().anonymous;
            else if (key == "Swap")
                field = &out.back().swap;
        }
        if (field == nullptr) continue;
        if (!field_bytes(line, colon, *field))
            return fail(error_code::bad_value, where + ": " + std::string(key) + " is no number of kB");
    }
    return out;
}

smaps_totals totals_of(const std::vector<mapping>& mappings) {
    smaps_totals t;
    for (const mapping& m : mappings) {
        t.rss += m.rss;
        t.anonymous += m.anonymous;
        t.swap += m.swap;
        if (m.file_backed()) t.file_rss += m.rss;
    }
    return t;
}

std::uint64_t resident_in(const std::vector<mapping>& mappings, const std::vector<address_range>& ranges) {
    std::uint64_t sum = 0;
    for (const mapping& m : mappings)
        for (const address_range& r : ranges)
            if (m.range.overlaps(r)) {
                sum += m.rss;
                break;
            }
    return sum;
}

}  // namespace memory
}  // namespace heapd
