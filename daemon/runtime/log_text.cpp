#include "daemon/runtime/log_text.h"

#include <cstdio>

namespace heapd::daemon {
namespace {

// The length of the UTF-8 character at the start of s (2 to 4 bytes), or 0 when it is not one.
std::size_t utf8_length(std::string_view s) {
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char c = b(0);
    std::size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
    if (n == 0 || s.size() < n) return 0;
    for (std::size_t i = 1; i < n; ++i)
        if ((b(i) & 0xC0) != 0x80) return 0;
    return n;
}

}  // namespace

std::string bounded_text(std::string_view text, std::size_t max) {
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        std::string piece;
        std::size_t used = 1;
        if (c == '\n')
            piece = "\\n";
        else if (c == '\r')
            piece = "\\r";
        else if (c == '\t')
            piece = "\\t";
        else if (c == '\\')
            piece = "\\\\";
        else if (c >= 0x20 && c < 0x7f)
            piece.assign(1, static_cast<char>(c));
        else if (c >= 0x80 && (used = utf8_length(text.substr(i))) != 0)
            piece.assign(text.substr(i, used));
        else {
            char hex[5];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            piece = hex;
            used = 1;
        }
        if (out.size() + piece.size() > max) break;
        out += piece;
        i += used;
    }
    if (i < text.size()) out += "... (" + std::to_string(text.size() - i) + " more bytes)";
    return out;
}

}  // namespace heapd::daemon
