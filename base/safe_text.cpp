#include "base/safe_text.h"

#include <cstdio>

namespace heapd {

std::size_t utf8_char_length(std::string_view s) {
    if (s.empty()) return 0;
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char c = b(0);
    const std::size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
    if (n == 0 || s.size() < n) return 0;
    for (std::size_t i = 1; i < n; ++i)
        if ((b(i) & 0xC0) != 0x80) return 0;
    return n;
}

std::string terminal_safe(std::string_view text) {
    std::string out;
    std::size_t copied = 0;  // text before this is in out
    bool escaped = false;
    for (std::size_t i = 0; i < text.size();) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if ((c >= 0x20 && c < 0x7F) || c == '\n' || c == '\t') {
            ++i;
            continue;
        }
        const std::size_t n = c >= 0x80 ? utf8_char_length(text.substr(i)) : 0;
        const bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0;
        if (n != 0 && !c1) {
            i += n;
            continue;
        }
        char escape[8];
        if (c1)
            std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned char>(text[i + 1]));
        else
            std::snprintf(escape, sizeof escape, "\\x%02x", c);
        out.append(text.substr(copied, i - copied));
        out += escape;
        i += c1 ? 2 : 1;
        copied = i;
        escaped = true;
    }
    if (!escaped) return std::string(text);
    out.append(text.substr(copied));
    return out;
}

}  // namespace heapd
