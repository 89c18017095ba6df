#pragma once
// Text from outside (names in a dump, another user's command line, a JVM's reply) made safe to
// show: what is UTF-8 and printable stays, the rest is written as escapes.
#include <cstddef>
#include <string>
#include <string_view>

namespace heapd {

// The length of the UTF-8 character of 2 to 4 bytes at the start of s, or 0 when it is not one.
std::size_t utf8_char_length(std::string_view s);

// Text for a terminal: control characters other than newline and tab (C0, DEL) and bytes that are not UTF-8
// written as \xNN, the C1 controls (U+0080 to U+009F) as \u00NN, so that names taken from a dump or
// from another user's process cannot move the cursor, retitle the window or hide lines. Text that
// needs none comes back unchanged.
std::string terminal_safe(std::string_view text);

}  // namespace heapd
