#pragma once
// Shell code for `cvm env`, `cvm deactivate`, `cvm script` and `cvm init`: bash, zsh, fish,
// PowerShell and cmd. Pure text generation (no I/O), so every renderer is unit-tested and the
// integration tests run its output in the real shells.
//
// Every activation, from `cvm env` or from a generated script, shares one saved state in the
// environment itself, so that any of them can be undone by any deactivate step:
//   _CVM_SAVED          the names the activation changed, separated by single spaces
//   _CVM_OLD_<NAME>     the value NAME had before the first activation; absent when NAME was unset
// An activation first undoes an earlier one (restoring the saved values), then saves the current
// values of the names it changes, then changes them; so repeated activations keep the state from
// before the first one. Deactivating restores exactly that state, unsetting what was unset.
// bash, zsh, fish and PowerShell get a function `cvm_deactivate`; cmd scripts take the argument
// `deactivate`, and `cvm deactivate --shell SHELL` prints the same restore code for any shell.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "activation/environment.h"
#include "shells/shell_types.h"
#include "spec/spec.h"
#include "platform/platform.h"

namespace cvm {

// "bash", "zsh", "fish", "pwsh" (also "powershell"), "cmd"; case-insensitive; a path or a
// ".exe" suffix is accepted ("/usr/bin/zsh", "pwsh.exe"). nullopt for anything else.
std::optional<Shell> parse_shell(std::string_view name);
const char* shell_name(Shell shell);

// The shell `cvm env` talks to when --shell is absent. Linux: the shell that runs cvm (`parent`,
// the parent process's name: `cvm env | source` in fish is run by fish whatever $SHELL says),
// else the basename of $SHELL (bash when unknown). Windows: PowerShell when PSModulePath holds a
// user module folder (PowerShell adds one; the machine-wide value has only two entries), else cmd.
Shell detect_shell(const EnvLookup& get_env, platform::Os os,
                   const std::optional<std::string>& parent = std::nullopt);

// A literal that evaluates to exactly `value` in the shell. bash/zsh: single quotes; fish:
// single quotes with \\ and \'; PowerShell: single quotes (all four quote code points doubled)
// with non-ASCII characters spelled as [char] codes, so the code is pure ASCII whatever the
// console's encoding; cmd: caret escapes and doubled %, for an unquoted `set NAME=...` line of
// a batch file run with delayed expansion off.
std::string shell_quote(Shell shell, std::string_view value);

// Code that activates `changes` (from compute_environment) in the current shell.
std::string render_env(Shell shell, const std::vector<EnvChange>& changes);

// Code that undoes the current activation (nothing when none is active).
std::string render_deactivate(Shell shell);

// A standalone activation script (ActivationScript, shells/shell_types.h).
std::string render_script(Shell shell, const ActivationScript& script);

// The default file of `cvm script`: activate_cuda112.bat (cmd), .ps1 (pwsh), .sh, .fish.
std::string script_file_name(Shell shell, const Version& toolkit);

// Code that sets or unsets each variable as given and nothing else: the prompt hook's output.
std::string render_assignments(Shell shell, const std::vector<EnvChange>& changes);

// What a shell's rc file needs: `shims_dir` first on PATH (idempotent: earlier copies are
// removed), the `cvm` function that lets `cvm shell` and `cvm deactivate` change the shell, and
// the prompt hook; `cvm init` adds the completion script (src/cli/completion.h). cmd has no rc
// file: ShellError.
std::string render_init(Shell shell, const InitOptions& options);
// The same without the hook and the function (the rc code before them).
std::string render_init(Shell shell, const std::string& shims_dir, platform::Os os);

} // namespace cvm
