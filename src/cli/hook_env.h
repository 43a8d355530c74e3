#pragma once
// What `cvm deactivate` and `cvm shell` share with `cvm hook-env` (hook_env.cpp).
#include <string>
#include <vector>

namespace CLI {
class App;
}

#include "activation/environment.h"
#include "shells/shell.h"

namespace cvm::cli {

// The edits that take back what the prompt hook applied (from _CVM_HOOK), read against `env`;
// empty when the hook applied nothing.
std::vector<EnvChange> hook_undo_changes(const EnvLookup& env);

// The one line saying that the `cvm` function of `cvm init` is not in this shell, and how to
// add it, for `command` (shell, deactivate).
std::string integration_missing(const std::string& command, Shell shell);

// `--prompt-hook on|off` (hidden): the `cvm` function of `cvm init` (with its hook) tells `cvm
// shell` and `cvm deactivate` whether the prompt hook is on in the shell, since it turns the hook
// off after `cvm deactivate` and on again after `cvm shell`. Adds the option; `state` receives it.
void add_prompt_hook_option(CLI::App& cmd, std::string& state);

// What `command` ("shell" or "deactivate") does to the prompt hook whose state (`on`, `off`) the
// function gave, printed on stderr when it succeeded; empty when nothing changes that is worth a
// line (`cvm shell` with the hook on), or no state was given (no hook: `cvm init --no-hook`, a pipe).
std::string prompt_hook_line(const std::string& command, const std::string& state);

} // namespace cvm::cli
