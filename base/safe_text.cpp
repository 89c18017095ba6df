#include "base/safe_text.h"

#include <cstdio>

namespace heapd {
namespace {

// The code point of the UTF-8 character of n bytes at the start of s.
unsigned code_point(std::string_view s, std::size_t n) {
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]) & 0x3Fu; };
    const auto lead = static_cast<unsigned char>(s[0]);
    if (n == 2) return (lead & 0x1Fu) << 6 | b(1);
    if (n == 3) return (lead & 0x0Fu) << 12 | b(1) << 6 | b(2);
    return (lead & 0x07u) << 18 | b(1) << 12 | b(2) << 6 | b(3);
}

std::string escaped(std::string_view text, bool one_line) {
    std::string out;
    std::size_t copied = 0;  // text before this is in out
    bool changed = false;
    for (std::size_t i = 0; i < text.size();) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        const bool line_break = c == '\n' || c == '\t' || c == '\r';
        if ((c >= 0x20 && c < 0x7F) || (line_break && !one_line && c != '\r')) {
            ++i;
            continue;
        }
        const std::size_t n = c >= 0x80 ? utf8_char_length(text.substr(i)) : 0;
        const unsigned point = n != 0 ? code_point(text.substr(i), n) : 0;
        const bool control = n != 0 && ((point >= 0x80 && point < 0xA0) || is_bidi_control(text.substr(i), n));
        if (n != 0 && !control) {
            i += n;
            continue;
        }
        char escape[16];
        if (control)
            std::snprintf(escape, sizeof escape, "\\u%04x", point);
        else if (one_line && line_break)
            std::snprintf(escape, sizeof escape, "%s", c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t");
        else
            std::snprintf(escape, sizeof escape, "\\x%02x", c);
        out.append(text.substr(copied, i - copied));
        out += escape;
        i += control ? n : 1;
        copied = i;
        changed = true;
    }
    if (!changed) return std::string(text);
    out.append(text.substr(copied));
    return out;
}

}  // namespace

std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) {
    if (s.size() <= max_bytes) return s;
    std::size_t cut = max_bytes;
    // Back over continuation bytes (10xxxxxx) to the start of the character the cut falls in.
    for (int i = 0; i < 3 && cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0u) == 0x80u; ++i) --cut;
    return s.substr(0, cut);
}

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

bool is_bidi_control(std::string_view s, std::size_t n) {
    if (n < 2 || n > 3 || s.size() < n) return false;
    const unsigned p = code_point(s, n);
    return (p >= 0x202A && p <= 0x202E) || (p >= 0x2066 && p <= 0x2069) || p == 0x200E || p == 0x200F || p == 0x061C;
}

std::string terminal_safe(std::string_view text) { return escaped(text, false); }

std::string line_safe(std::string_view text) { return escaped(text, true); }

}  // namespace heapd
