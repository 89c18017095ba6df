#include "formats/memory/cgroup_files.h"

#include <charconv>
#include <cstdlib>
#include <string>

#include "formats/memory/internal/text_lines.h"

namespace heapd {
inline namespace memory {
namespace {

// The number at the start of text (after spaces), up to a space or the end of the line.
std::optional<std::int64_t> number_at(std::string_view text) {
    const std::size_t start = text.find_first_not_of(' ');
    if (start == std::string_view::npos) return std::nullopt;
    text.remove_prefix(start);
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || (end != text.data() + text.size() && *end != '\n' && *end != ' ')) return std::nullopt;
    return value;
}

// Whether a cgroup path stays inside its hierarchy: absolute, no "." or ".." component.
bool inside_hierarchy(std::string_view path) {
    if (!path.starts_with('/')) return false;
    for (std::size_t at = 1; at <= path.size();) {
        const std::size_t end = std::min(path.find('/', at), path.size());
        const std::string_view part = path.substr(at, end - at);
        if (part == "." || part == ".." || (part.empty() && end != path.size())) return false;
        at = end + 1;
    }
    return true;
}

}  // namespace

std::optional<memory_cgroup> memory_cgroup_of(std::string_view text) {
    std::optional<memory_cgroup> unified;
    text_lines all(text);
    for (std::string_view line; all.next(line);) {
        const std::size_t first = line.find(':');
        const std::size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
        if (second == std::string_view::npos) continue;
        const std::string_view controllers = line.substr(first + 1, second - first - 1);
        const std::string_view path = line.substr(second + 1);
        if (!inside_hierarchy(path)) continue;
        if (controllers.empty() && line.substr(0, first) == "0") {
            unified = memory_cgroup{2, std::string(path)};
            continue;
        }
        for (std::size_t c = 0; c <= controllers.size();) {
            const std::size_t comma = std::min(controllers.find(',', c), controllers.size());
            if (controllers.substr(c, comma - c) == "memory") return memory_cgroup{1, std::string(path)};
            c = comma + 1;
        }
    }
    return unified;
}

std::optional<std::int64_t> parse_limit(std::string_view text) {
    const auto value = number_at(text);
    if (!value || *value < 0 || *value >= (std::int64_t{1} << 62)) return std::nullopt;
    return value;
}

std::optional<std::int64_t> key_value(std::string_view text, std::string_view key) {
    text_lines all(text);
    for (std::string_view line; all.next(line);) {
        if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ' ')
            return number_at(line.substr(key.size() + 1));
    }
    return std::nullopt;
}

std::optional<memory_pressure> parse_pressure(std::string_view text) {
    // The value after "name=" in a line, nothing when absent or no number.
    auto field = [](std::string_view line, std::string_view name) -> std::optional<double> {
        const std::size_t at = line.find(" " + std::string(name) + "=");
        if (at == std::string_view::npos) return std::nullopt;
        const std::string value(line.substr(at + name.size() + 2, line.find(' ', at + 1) - (at + name.size() + 2)));
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (value.empty() || end != value.c_str() + value.size() || !(v >= 0 && v <= 100)) return std::nullopt;
        return v;
    };
    std::optional<double> values[4];
    text_lines lines(text);
    for (std::string_view line; lines.next(line);) {
        const int base = line.starts_with("some ") ? 0 : line.starts_with("full ") ? 2 : -1;
        if (base < 0) continue;
        values[base] = field(line, "avg10");
        values[base + 1] = field(line, "avg60");
    }
    for (const auto& v : values)
        if (!v) return std::nullopt;
    return memory_pressure{*values[0], *values[1], *values[2], *values[3]};
}

}  // namespace memory
}  // namespace heapd
