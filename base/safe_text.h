#pragma once
// Text from outside (names in a dump, another user's command line, a JVM's reply) made safe to
// show: what is UTF-8 and printable stays, the rest is written as escapes.
#include <cstddef>
#include <string>
#include <string_view>

namespace heapd {

// The length of the UTF-8 character of 2 to 4 bytes at the start of s, or 0 when it is not one.
std::size_t utf8_char_length(std::string_view s);

// The longest prefix of s of at most max_bytes that does not end inside a UTF-8 character: for
// text from outside cut to a bound.
std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes);

// Whether the UTF-8 character at the start of s (n bytes) is a bidirectional formatting control:
// U+202A to U+202E (embeddings, overrides), U+2066 to U+2069 (isolates), U+200E, U+200F (marks),
// U+061C. Shown as they are, they reorder the text around them: a name could make a line read as
// something else.
bool is_bidi_control(std::string_view s, std::size_t n);

// Text for a terminal: control characters other than newline and tab (C0, DEL) and bytes that are not UTF-8
// written as \xNN, the C1 controls (U+0080 to U+009F) and bidirectional controls as \uNNNN, so that
// names taken from a dump or from another user's process cannot move the cursor, retitle the
// window, hide lines or reorder them. Text that needs none comes back unchanged.
std::string terminal_safe(std::string_view text);

// One name or value from outside, made to stay on its line: as terminal_safe, and newline,
// carriage return and tab written as \n, \r and \t, so that it cannot begin a line of its own (a
// forged log or table line). For every name a report or listing prints.
std::string line_safe(std::string_view text);

}  // namespace heapd
