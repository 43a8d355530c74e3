#pragma once
// The hidden commands that completion and the man page are made by, above the command model
// (cli_model.h) and what is made from it (completion.h, manpage.h).
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace cvm::cli {

// The hidden commands, answered before the command line is parsed: `__complete WORDS...`,
// `__man [FILE]` and `__describe NAME`. Returns the exit code, or nothing for any other command.
std::optional<int> answer_internal(const CLI::App& app, const std::vector<std::string>& args);

} // namespace cvm::cli
