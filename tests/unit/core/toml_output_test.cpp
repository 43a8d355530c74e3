// The one TOML string writer (text/toml_output.h): TOML basic-string escaping, and every string
// it writes reads back through parse_toml as the same text.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "text/toml_input.h"
#include "text/toml_output.h"

using namespace cvm;

namespace {

std::string read_back(const std::string& written) {
    auto table = parse_toml<std::runtime_error>("v = " + written + "\n", "t.toml", "");
    auto value = table["v"].value<std::string>();
    REQUIRE(value);
    return *value;
}

} // namespace

TEST_CASE("a TOML basic string escapes quotes, backslashes and every control character") {
    CHECK(toml_basic_string("") == "\"\"");
    CHECK(toml_basic_string("plain text") == "\"plain text\"");
    CHECK(toml_basic_string("a \"b\" c\\d") == "\"a \\\"b\\\" c\\\\d\"");
    CHECK(toml_basic_string("a\tb\nc\rd") == "\"a\\tb\\nc\\rd\"");
    CHECK(toml_basic_string(std::string("\0", 1)) == "\"\\u0000\"");
    CHECK(toml_basic_string("\x01\x1f") == "\"\\u0001\\u001F\"");
    CHECK(toml_basic_string("\x7f") == "\"\\u007F\"");
    CHECK(toml_basic_string("caf\xc3\xa9") == "\"caf\xc3\xa9\""); // UTF-8 stays as it is
}

TEST_CASE("every ASCII character written as a TOML string reads back as itself") {
    for (int c = 0; c < 0x80; ++c) {
        const std::string text = "x" + std::string(1, static_cast<char>(c)) + "y";
        INFO("character " << c);
        CHECK(read_back(toml_basic_string(text)) == text);
    }
    const std::string utf8 = "file:///m/caf\xc3\xa9/\xe2\x82\xac/\xf0\x9f\x93\xa6.tar.xz";
    CHECK(read_back(toml_basic_string(utf8)) == utf8);
}
