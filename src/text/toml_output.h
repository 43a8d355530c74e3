#pragma once
// TOML text written by cvm (the lockfile, the first-use record): its one string writer, so that
// every file cvm writes escapes alike and reads back through parse_toml (text/toml_input.h).
#include <string>
#include <string_view>

namespace cvm {

// `text` as a TOML basic string, quotes included: `"` and `\` escaped, the control characters
// (U+0000 to U+001F and U+007F) as \t \n \r or \uXXXX, everything else as it is. UTF-8 text
// stays readable; bytes that are not UTF-8 cannot be a TOML string at all and pass through, so
// reading the file back refuses them with their line.
std::string toml_basic_string(std::string_view text);

} // namespace cvm
