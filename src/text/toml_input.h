#pragma once
// TOML text made safe for toml++ before it is parsed. toml++ 3.3 (Debian 12's) classifies a
// non-ASCII character outside a string with a generated table that has holes: for some code
// points (U+00A1 to U+0499, U+FDC0 to U+FEFE) it reaches __builtin_unreachable, which is undefined
// behaviour (upstream issues #190 and #295; found by fuzz_config and fuzz_lockfile). So toml++
// is only ever given ASCII: the non-ASCII letters of one-line strings become \u escapes (literal
// strings become basic strings with the same value), those of comments are dropped, and any
// other non-ASCII character is refused with its line. Lines keep their numbers. Input that reaches
// one of toml++'s own assertions (an abort in a Debug build, an assumption clang's Release build
// optimizes on) is refused here too: a table header without a key ("[!]"), a "}" where an array
// expects a value ("a = [1, }]"), a date followed by a lone digit ("a = 2020-01-01 0"); found by
// fuzzing toml++ with its assertions on.
#include <optional>
#include <string>
#include <string_view>
#include <toml++/toml.h>

namespace cvm {

struct TomlInputProblem {
    int line = 1;
    std::string what; // "a non-ASCII character outside quotes"
};

// toml++'s description of a parse error in cvm's words: without the names of its configuration
// macros ("exceeded maximum nested value depth of 256 (TOML_MAX_NESTED_VALUES)").
std::string toml_error_words(std::string_view description);

// Writes the ASCII form of `text` to `out`; returns a problem instead when there is none.
std::optional<TomlInputProblem> ascii_toml(std::string_view text, std::string& out);

// Parses TOML text (its ASCII form) with toml++. Either kind of mistake throws
// Error("<origin>:<line>: <what><advice>").
template <class Error>
toml::table parse_toml(std::string_view text, const std::string& origin, const std::string& advice) {
    auto error = [&](std::size_t line, const std::string& what) {
        return Error(origin + ":" + std::to_string(line) + ": " + what + advice);
    };
    std::string ascii;
    if (auto bad = ascii_toml(text, ascii)) throw error(static_cast<std::size_t>(bad->line), bad->what);
    try {
        return toml::parse(ascii, origin);
    } catch (const toml::parse_error& e) {
        throw error(e.source().begin.line, toml_error_words(e.description()));
    }
}

} // namespace cvm
