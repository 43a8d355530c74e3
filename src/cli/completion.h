#pragma once
// Completion of cvm's command line. The shell scripts (`cvm completions SHELL`, also part of
// `cvm init`) are thin: they hand the words to `cvm __complete`, which answers from the command
// model (cli_model.h) and from the store and registry for values.
//
// Protocol: `cvm __complete WORD... CURRENT`, the words after `cvm` up to the cursor, the last
// one the (possibly empty) word being completed; `""` stands for an empty CURRENT (PowerShell
// 5 drops empty arguments). Answer on stdout: one candidate a line, `VALUE` or
// `VALUE<TAB>DESCRIPTION`, already filtered by CURRENT, then one last line saying what the shell
// adds itself: `:files`, `:dirs`, `:commands` (programs on PATH) or `:none`. Exit code 0.
#include <string>
#include <vector>

#include "cli/cli_model.h"

namespace CLI {
class App;
}

namespace cvm::cli {

struct Candidate {
    std::string value;
    std::string description;
};

struct Completion {
    std::vector<Candidate> candidates;
    std::string directive = "none"; // files, dirs, commands, none
};

// What a value of an option or positional is, from its name and value name.
enum class ValueKind {
    None,
    Choices,     // the option's IsMember list
    Spec,        // CUDA[+CUDNN] as users type it: installed ids and their prefixes, system
    Id,          // installed toolkit and cuDNN ids
    Shell,       // the shells the description names
    Tool,        // programs the shims provide
    Program,     // any program on PATH
    Dir,
    File,
    InstallWhat, // cuda, cudnn, known releases, archives
    CudaVersion, // CUDA versions known to the registry
    CommandName, // cvm's own commands
    Framework,   // `use --for`: ., torch==VERSION, tensorflow==VERSION of the registry
};
ValueKind value_kind(const OptionModel& option);

// The values of one kind that start with `prefix`; `given` holds the positional words already
// typed for the command (`cvm install cuda <TAB>` completes CUDA releases). Store and registry
// problems give no values, never an error (completion_values.cpp).
Completion dynamic_values(ValueKind kind, const std::vector<std::string>& given, const std::string& prefix);

// The shells an option's description names ("bash, zsh, fish or pwsh"; all but powershell when
// it names none) that start with `prefix`: `init` does not offer cmd while `env --shell` does.
Completion shell_values(const std::string& description, const std::string& prefix);

// Adds `value` when it starts with `prefix` and is not there yet; the description is cut to
// one short line.
void add_candidate(Completion& out, const std::string& value, const std::string& description, const std::string& prefix);

// The completion of the last of `words` (pure apart from dynamic_values).
Completion complete_words(const CommandModel& root, std::vector<std::string> words);

// `cvm __complete`'s whole answer, in the protocol above.
std::string completion_answer(const CLI::App& app, const std::vector<std::string>& words);

// The script a shell sources: bash, zsh, fish, pwsh (also "powershell"). Empty for others.
// With `exe` (cvm init's), the script runs that cvm, quoted for the shell, rather than the first
// `cvm` on PATH, which may be a project's bin/cvm (issue 33); without it (`cvm completions`, the
// packaged files), `cvm` as PATH finds it. shell_quote's ShellError for an `exe` it cannot carry.
std::string completion_script(const std::string& shell, const std::string& exe = {});

// `cvm completions SHELL`.
void register_completions(CLI::App& app);

} // namespace cvm::cli
