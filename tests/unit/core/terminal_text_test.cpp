#include <catch2/catch.hpp>

#include <string>

#include "text/terminal_text.h"

using cvm::escape_controls;

TEST_CASE("escape_controls shows C0 controls and DEL escaped") {
    CHECK(escape_controls("/tmp/x\x1b[2J\x1b]0;pwned\ay") == "/tmp/x\\x1b[2J\\x1b]0;pwned\\x07y");
    CHECK(escape_controls(std::string("a\0b", 3)) == "a\\x00b");
    CHECK(escape_controls("a\x7f"
                          "b") == "a\\x7fb");
    CHECK(escape_controls("tab\there") == "tab\\x09here");
}

TEST_CASE("escape_controls keeps line breaks only when asked") {
    CHECK(escape_controls("one\ntwo") == "one\\x0atwo");
    CHECK(escape_controls("one\ntwo\n", true) == "one\ntwo\n");
    CHECK(escape_controls("one\r\n", true) == "one\\x0d\n");
}

TEST_CASE("escape_controls escapes C1 controls and bytes that are not UTF-8") {
    CHECK(escape_controls("x\xc2\x9b"
                          "31m") == "x\\u009b31m");      // CSI as UTF-8
    CHECK(escape_controls("x\xc2\x85y") == "x\\u0085y"); // NEL
    CHECK(escape_controls("\xff\xfe") == "\\xff\\xfe");
    CHECK(escape_controls("\xc0\xaf") == "\\xc0\\xaf");          // overlong '/'
    CHECK(escape_controls("\xed\xa0\x80") == "\\xed\\xa0\\x80"); // a surrogate
    CHECK(escape_controls("cut\xe2\x82") == "cut\\xe2\\x82");    // a sequence cut short
}

TEST_CASE("escape_controls keeps printable UTF-8 as it is") {
    CHECK(escape_controls("/home/j\xc3\xb6rg/cuda \xe2\x82\xac \xf0\x9f\x98\x80") ==
          "/home/j\xc3\xb6rg/cuda \xe2\x82\xac \xf0\x9f\x98\x80");
    CHECK(escape_controls("\xc2\xa0") == "\xc2\xa0"); // U+00A0 is past the C1 controls
}

TEST_CASE("escape_controls keeps colour sequences only when asked, and nothing else") {
    const std::string red = "\x1b[1;31mERROR\x1b[0m";
    CHECK(escape_controls(red, false, true) == red);
    CHECK(escape_controls(red) == "\\x1b[1;31mERROR\\x1b[0m");
    // Moving the cursor, clearing the screen, setting the title: escaped even among colours.
    CHECK(escape_controls("\x1b[2J\x1b[H\x1b]0;t\a", false, true) ==
          "\\x1b[2J\\x1b[H\\x1b]0;t\\x07");
    CHECK(escape_controls("\x1b[", false, true) == "\\x1b[");
}
