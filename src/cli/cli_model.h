#pragma once
// The command line as data: one walk over the CLI11 app gives the tree that completion
// (`cvm __complete`, `cvm completions`) and the man page (`cvm __man`) are made from, so
// neither can drift from the commands as registered.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace CLI {
class App;
}

namespace cvm::cli {

struct OptionModel {
    std::vector<std::string> names; // "--global", "-g" (long first); empty for a positional
    std::string positional;         // "spec" for a positional
    std::string value_name;         // "SPEC", "SHELL"; empty for a flag
    std::string description;
    std::vector<std::string> choices; // from an IsMember check ("cuda", "cudnn")
    bool required = false;
    bool repeats = false; // takes several values (or may be given several times)

    bool takes_value() const { return !value_name.empty(); }
    bool is_positional() const { return names.empty(); }
};

struct CommandModel {
    std::string name; // "" for cvm itself
    std::vector<std::string> aliases;
    std::string description;
    std::string footer;
    std::vector<OptionModel> options; // hidden ones left out; positionals in order
    std::vector<CommandModel> commands;
    bool passthrough = false; // from the first positional on, words belong to another program

    const CommandModel* command(const std::string& name_or_alias) const;
    const OptionModel* option(const std::string& name) const; // "--shell" or "-o"
    std::vector<const OptionModel*> positionals() const;
};

// The tree of `app`. A command marked with forward_model is described by its companion
// program (`PROGRAM __describe NAME`) when `ask_companions`, so that the man page documents
// the options cvm-install has (completion hands such a command's words to the companion).
CommandModel describe(const CLI::App& app, bool ask_companions = true);
void forward_model(const CLI::App* command, std::string companion);

// As JSON, for `__describe` (from_json throws nlohmann::json::exception).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(OptionModel, names, positional, value_name, description, choices, required,
                                   repeats)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CommandModel, name, aliases, description, footer, options, commands, passthrough)

// The companion program `command` was forwarded to (forward_model), or null.
const std::string* forwarded_to(const CLI::App* command);

} // namespace cvm::cli
