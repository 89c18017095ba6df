#include "daemon/runtime/log_text.h"

#include <cstdio>

#include "base/safe_text.h"

namespace heapd::daemon {

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
        else if (c >= 0x80 && (used = utf8_char_length(text.substr(i))) != 0)
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
