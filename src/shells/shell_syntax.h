#pragma once
// One table per shell: what differs between them. Each shell's file defines its own (bash in
// shell_bash.cpp, zsh in shell_zsh.cpp, both on shell_posix.cpp; fish, pwsh, cmd); shell.cpp
// looks the shell up once and calls through the table.
#include <string>
#include <string_view>
#include <vector>

#include "shells/shell_types.h"

namespace cvm::shell_detail {

struct ShellSyntax {
    Shell shell;
    const char* name;          // as `--shell` takes it and shell_name() prints it
    const char* alias;         // another name parse_shell accepts (nullptr: none)
    const char* script_suffix; // of `cvm script`'s default file: ".sh", ".fish", ".ps1", ".bat"
    // A literal that evaluates to exactly the value (checked by shell.cpp first).
    std::string (*quote)(std::string_view value);
    // Activation (`cvm env`), restore (`cvm deactivate`), a standalone script (`cvm script`),
    // plain assignments (the prompt hook's output) and the rc-file code (`cvm init`; cmd's
    // throws ShellError: it has no rc file).
    std::string (*env)(const std::vector<EnvChange>& changes);
    std::string (*deactivate)();
    std::string (*script)(const ActivationScript& script);
    std::string (*assign)(const std::vector<EnvChange>& changes);
    std::string (*init)(const InitOptions& options);
};

extern const ShellSyntax kBashSyntax;
extern const ShellSyntax kZshSyntax;
extern const ShellSyntax kFishSyntax;
extern const ShellSyntax kPwshSyntax;
extern const ShellSyntax kCmdSyntax;

} // namespace cvm::shell_detail
