#include "formats/report/quantities.h"

#include <cmath>
#include <ctime>
#include <iterator>

namespace heapd {
inline namespace report {
namespace text {

std::string duration_text(std::int64_t ms) {
    const long long v = ms;
    if (v < 1000) return fmt("%lld ms", v);
    if (v < 60000) return fmt("%.1f s", static_cast<double>(v) / 1000);
    if (v < 3600000) return fmt("%lldm %02llds", v / 60000, v / 1000 % 60);
    return fmt("%lldh %02lldm", v / 3600000, v / 60000 % 60);
}

std::string clock_text(std::uint64_t ms) {
    const unsigned long long s = ms / 1000;
    if (s >= 3600) return fmt("%lluh %02llum %02llus", s / 3600, s / 60 % 60, s % 60);
    if (s >= 60) return fmt("%llum %02llus", s / 60, s % 60);
    return fmt("%llus", s);
}

std::string percent_text(double percent, int decimals) { return fmt("%.*f%%", decimals, percent); }

std::string round_percent(double percent) {
    const double r = std::round(percent * 10) / 10;
    return fmt(r == std::floor(r) ? "%.0f%%" : "%.1f%%", r);
}

std::string grouped(std::uint64_t v) {
    std::string digits = std::to_string(v), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string human_bytes(std::uint64_t bytes) {
    static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    if (bytes < 1024) return std::to_string(bytes) + " B";
    double v = static_cast<double>(bytes);
    unsigned u = 0;
    // A value that would print as 1024 (1023.6) moves up a unit too.
    while (std::round(v) >= 1024 && u + 1 < std::size(units)) {
        v /= 1024;
        ++u;
    }
    // Decimals by the value as it will print: 9.996 shows as "10.0", 99.96 as "100".
    const char* f = std::round(v * 100) / 100 < 10 ? "%.2f %s" : std::round(v * 10) / 10 < 100 ? "%.1f %s" : "%.0f %s";
    return fmt(f, v, units[u]);
}

std::string utc_time(std::uint64_t ms) {
    std::time_t t = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    if (gmtime_r(&t, &tm) == nullptr) return "?";
    char buf[40];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return buf;
}

// Appends text after indent, broken before " → " so lines stay under 100 columns.
void wrapped_path(std::string& out, const std::string& indent, const std::string& text) {
    static const std::string arrow = " \u2192 ";
    std::string line = indent;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t next = text.find(arrow, pos + 1);
        std::string piece = text.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
        if (line.size() > indent.size() + 4 && line.size() + piece.size() > 99) {
            out += line + "\n";
            line = indent + "   ";
            if (piece.starts_with(" ")) piece.erase(0, 1);
        }
        line += piece;
        pos = next == std::string::npos ? text.size() : next;
    }
    out += line + "\n";
}

// Appends "what: a, b, c" after indent, broken after a comma or colon so lines stay under 100 columns.
void wrapped_list(std::string& out, const std::string& indent, const std::string& text) {
    std::string line = indent;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t next = std::min(text.find(", ", pos), text.find(": ", pos));
        std::size_t end = next == std::string::npos ? text.size() : next + 1;  // the piece keeps its comma
        std::string piece = text.substr(pos, end - pos);
        if (line.size() > indent.size() + 4 && line.size() + piece.size() > 99) {
            while (line.ends_with(' ')) line.pop_back();
            out += line + "\n";
            line = indent + "   ";
            if (piece.starts_with(" ")) piece.erase(0, 1);
        }
        line += piece;
        pos = end;
    }
    out += line + "\n";
}

}  // namespace text
}  // namespace report
}  // namespace heapd
