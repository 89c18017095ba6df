#include "formats/report/text_format.h"

#include <cmath>

namespace heapd::text {

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

}  // namespace heapd::text
