#pragma once
// TOML text made safe for toml++ before it is parsed. toml++ 3.3 (Debian 12's) classifies a
// non-ASCII character outside a string with a generated table that has holes: for some code
// points (U+00A1 to U+0499, U+FDC0 to U+FEFE) it reaches __builtin_unreachable, which is undefined
// behaviour (upstream issues #190 and #295; found by fuzz_config and fuzz_lockfile). So toml++
// is only ever given ASCII: the non-ASCII letters of one-line strings become \u escapes (literal
// strings become basic strings with the same value), those of comments are dropped, and any
// other non-ASCII character is refused with its line. Lines keep their numbers.
#include <optional>
#include <string>
#include <string_view>

namespace cvm {

struct TomlInputProblem {
    int line = 1;
    std::string what; // "a non-ASCII character outside quotes"
};

// Writes the ASCII form of `text` to `out`; returns a problem instead when there is none.
std::optional<TomlInputProblem> ascii_toml(std::string_view text, std::string& out);

} // namespace cvm
