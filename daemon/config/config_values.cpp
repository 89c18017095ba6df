#include "daemon/config/config_values.h"

#include <array>
#include <cctype>
#include <limits>

namespace heapd::daemon {
namespace {

// A duration unit: its name and length in milliseconds; longest names first for matching.
struct duration_unit {
    std::string_view name;
    std::int64_t ms;
};
constexpr std::array<duration_unit, 6> duration_units{{
    {"w", 7 * 24 * 3600 * 1000LL},
    {"d", 24 * 3600 * 1000LL},
    {"h", 3600 * 1000LL},
    {"m", 60 * 1000LL},
    {"s", 1000LL},
    {"ms", 1LL},
}};
constexpr std::int64_t max_duration_ms = 100LL * 366 * 24 * 3600 * 1000;

// Reads the digits at text[i...] into n (false when there are none or they overflow max).
bool read_number(std::string_view text, std::size_t& i, std::uint64_t& n, std::uint64_t max) {
    std::size_t start = i;
    n = 0;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
        unsigned d = static_cast<unsigned>(text[i] - '0');
        if (n > (max - d) / 10) return false;
        n = n * 10 + d;
    }
    return i > start;
}

}  // namespace

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
    if (text == "0") return std::chrono::milliseconds(0);
    std::size_t i = 0;
    std::int64_t total = 0;
    std::int64_t last_unit = std::numeric_limits<std::int64_t>::max();
    if (text.empty()) return std::nullopt;
    while (i < text.size()) {
        std::uint64_t n = 0;
        if (!read_number(text, i, n, static_cast<std::uint64_t>(max_duration_ms))) return std::nullopt;
        std::size_t end = i;
        while (end < text.size() && std::isalpha(static_cast<unsigned char>(text[end]))) ++end;
        std::string_view name = text.substr(i, end - i);
        const duration_unit* unit = nullptr;
        for (const duration_unit& u : duration_units)
            if (u.name == name) unit = &u;
        // Each unit once, largest first: "1h30m", never "30m1h" or "1h1h".
        if (unit == nullptr || unit->ms >= last_unit) return std::nullopt;
        last_unit = unit->ms;
        if (n > static_cast<std::uint64_t>((max_duration_ms - total) / unit->ms)) return std::nullopt;
        total += static_cast<std::int64_t>(n) * unit->ms;
        i = end;
    }
    return std::chrono::milliseconds(total);
}

std::optional<std::uint64_t> parse_size(std::string_view text) {
    std::size_t i = 0;
    std::uint64_t n = 0;
    if (!read_number(text, i, n, std::numeric_limits<std::uint64_t>::max())) return std::nullopt;
    std::string unit;
    for (char c : text.substr(i)) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (unit.empty() || unit == "b") return n;
    static constexpr std::string_view prefixes = "kmgtp";
    std::size_t power = prefixes.find(unit[0]);
    if (power == std::string_view::npos) return std::nullopt;
    std::string_view rest = std::string_view(unit).substr(1);
    if (!(rest.empty() || rest == "b" || rest == "ib")) return std::nullopt;
    std::uint64_t factor = std::uint64_t{1} << (10 * (power + 1));
    if (n > std::numeric_limits<std::uint64_t>::max() / factor) return std::nullopt;
    return n * factor;
}

std::string duration_string(std::chrono::milliseconds d) {
    std::int64_t left = d.count();
    if (left <= 0) return "0s";
    std::string out;
    for (const duration_unit& u : duration_units) {
        if (u.name == "w") continue;  // "14d" reads better than "2w"
        if (left >= u.ms) {
            out += std::to_string(left / u.ms) + std::string(u.name);
            left %= u.ms;
        }
    }
    return out;
}

std::string size_string(std::uint64_t bytes) {
    static constexpr std::string_view units = "KMGTP";
    if (bytes == 0) return "0";
    std::size_t unit = 0;
    while (unit < units.size() && bytes % 1024 == 0) {
        bytes /= 1024;
        ++unit;
    }
    return std::to_string(bytes) + (unit == 0 ? std::string() : std::string(1, units[unit - 1]));
}

std::optional<arm_mode> arm_mode_named(std::string_view name) {
    for (arm_mode m : {arm_mode::all, arm_mode::hooked, arm_mode::none})
        if (arm_mode_name(m) == name) return m;
    return std::nullopt;
}

std::string_view arm_mode_name(arm_mode mode) {
    switch (mode) {
    case arm_mode::all: return "all";
    case arm_mode::hooked: return "hooked";
    case arm_mode::none: return "none";
    }
    return "?";
}

}  // namespace heapd::daemon
