// Text from outside made safe for a terminal: escapes for control characters and stray bytes,
// everything printable (UTF-8 included) kept as it is.
#include "base/safe_text.h"

#include <gtest/gtest.h>

namespace heapd {
namespace {

TEST(terminal_safe, printable_text_and_newlines_are_kept) {
    EXPECT_EQ(terminal_safe("plain ascii\nand a second line\n"), "plain ascii\nand a second line\n");
    EXPECT_EQ(terminal_safe("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xC2\xA0"),
              "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xC2\xA0");
    EXPECT_EQ(terminal_safe(""), "");
}

TEST(terminal_safe, control_characters_are_escaped) {
    // A window title set, a colour, a clear screen, a bell, a NUL, a carriage return and DEL; a tab stays.
    EXPECT_EQ(terminal_safe("\x1b]0;owned\x07"), "\\x1b]0;owned\\x07");
    EXPECT_EQ(terminal_safe("red\x1b[31m!\x1b[2J"), "red\\x1b[31m!\\x1b[2J");
    EXPECT_EQ(terminal_safe(std::string("a\0b", 3)), "a\\x00b");
    EXPECT_EQ(terminal_safe("a\tb\rc\x7f"), "a\tb\\x0dc\\x7f");
}

TEST(terminal_safe, c1_controls_and_bytes_that_are_not_utf8_are_escaped) {
    // U+009B is CSI on terminals that take 8-bit controls; U+0085 is NEL.
    EXPECT_EQ(terminal_safe("x\xC2\x9B"
                            "31m\xC2\x85y"),
              "x\\u009b31m\\u0085y");
    // A lone continuation byte, a lead byte without its continuation, an overlong form, a byte above F4.
    EXPECT_EQ(terminal_safe("\x80|\xC3|\xC0\xAF|\xF5"), "\\x80|\\xc3|\\xc0\\xaf|\\xf5");
    // Cut short at the end of the text.
    EXPECT_EQ(terminal_safe("ok\xE2\x82"), "ok\\xe2\\x82");
}

TEST(terminal_safe, bidirectional_controls_are_escaped) {
    // U+202E (right-to-left override), U+2066 (left-to-right isolate), U+200F, U+061C; U+2010 stays.
    EXPECT_EQ(terminal_safe("evil\xE2\x80\xAEtxt.exe"), "evil\\u202etxt.exe");
    EXPECT_EQ(terminal_safe("a\xE2\x81\xA6"
                            "b\xE2\x80\x8F"
                            "c\xD8\x9C"
                            "d"),
              "a\\u2066b\\u200fc\\u061cd");
    EXPECT_EQ(terminal_safe("x\xE2\x80\x90y"), "x\xE2\x80\x90y");
}

TEST(line_safe, a_name_stays_on_its_line) {
    // A class name that would print a forged log line under a table's row.
    EXPECT_EQ(line_safe("com.a.B\nheapd[868] info: stopped\r\tx"), "com.a.B\\nheapd[868] info: stopped\\r\\tx");
    EXPECT_EQ(line_safe("caf\xC3\xA9\xE2\x80\xAE\x1b[2J"), "caf\xC3\xA9\\u202e\\x1b[2J");
    EXPECT_EQ(line_safe("java.util.HashMap$Node"), "java.util.HashMap$Node");
}

TEST(utf8_char_length, lengths_of_lead_bytes_with_their_continuations) {
    EXPECT_EQ(utf8_char_length("\xC3\xA9"), 2u);
    EXPECT_EQ(utf8_char_length("\xE2\x82\xAC"), 3u);
    EXPECT_EQ(utf8_char_length("\xF0\x9F\x98\x80"), 4u);
    EXPECT_EQ(utf8_char_length("a"), 0u);
    EXPECT_EQ(utf8_char_length("\xE2\x82"), 0u);
    EXPECT_EQ(utf8_char_length(""), 0u);
}

TEST(utf8_prefix, cuts_at_the_bound_and_never_inside_a_character) {
    EXPECT_EQ(utf8_prefix("abcdef", 4), "abcd");
    EXPECT_EQ(utf8_prefix("abc", 4), "abc");
    EXPECT_EQ(utf8_prefix("ab\xE2\x82\xAC", 4), "ab");  // the euro sign would be cut
    EXPECT_EQ(utf8_prefix("ab\xE2\x82\xAC", 5), "ab\xE2\x82\xAC");
    EXPECT_EQ(utf8_prefix("\xF0\x9F\x98\x80x", 3), "");
    EXPECT_EQ(utf8_prefix("a\x80\x80\x80\x80\x80"
                          "b",
                          5),
              "a\x80");  // not UTF-8: three bytes back at most
    EXPECT_EQ(utf8_prefix("abc", 0), "");
}

}  // namespace
}  // namespace heapd
