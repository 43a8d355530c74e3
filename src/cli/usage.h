#pragma once
// How cvm talks about its own command line: help, aliases, and parse errors in cvm's voice.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
class ParseError;
} // namespace CLI

namespace cvm::cli {

// The top-level help's examples and variables (also the man page's EXAMPLES and ENVIRONMENT).
struct HelpItem {
    std::string text;    // "cvm use 12.4+9", "CVM_ROOT"
    std::string meaning;
};
const std::vector<HelpItem>& help_examples();
const std::vector<HelpItem>& help_variables();

// One line per item, each item's text padded to `width`; examples_text puts "Examples:" first.
std::string items_text(const std::vector<HelpItem>& items, std::size_t width);
std::string examples_text(const std::vector<HelpItem>& items, std::size_t width);

// Ends each command's help (and its commands', "cache clean") with its examples
// (help_examples.cpp); `path` is the names of `app` below cvm ("" for cvm itself).
void add_command_examples(CLI::App& app, const std::string& path);

// "WHO: unknown option 'WORD'" for the option `typed` (its `=value` dropped), with the closest
// of `cmd`'s options as "did you mean" or else "see SEE"; `note`, when given, is added to either.
std::string unknown_option_line(CLI::App& cmd, const std::string& typed, const std::string& who,
                                const std::string& see, const std::string& note = "");

// After every command is registered: `help`, the aliases (ls, rm), -V, and the top-level
// help's examples and variables.
void describe_app(CLI::App& app);

// Bare `cvm` and `cvm help [CMD]`: prints the help and returns the exit code, or rewrites
// `help CMD` into `CMD --help` (so that a forwarded command answers for itself) and returns
// nothing. `args` is the command line without the program name, in order.
std::optional<int> answer_help(CLI::App& app, std::vector<std::string>& args);

// One line in cvm's voice for a parse error, naming the command, the value and what to run
// (printed as it is, exit code 2). `args` is the command line as parsed, in order.
std::string parse_error_line(CLI::App& app, const CLI::ParseError& error, const std::vector<std::string>& args);

// The line for a command's own error message: "cvm exec: nothing to run" when the message
// starts with a command's name ("exec: nothing to run", "lock --check: ..."), as parse errors
// are worded; "cvm: MESSAGE" otherwise.
std::string error_line(CLI::App& app, const std::string& message);

} // namespace cvm::cli
