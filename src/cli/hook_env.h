#pragma once
// What `cvm deactivate` and `cvm shell` share with `cvm hook-env` (hook_env.cpp).
#include <string>
#include <vector>

#include "core/environment.h"
#include "core/shell.h"

namespace cvm::cli {

// The edits that take back what the prompt hook applied (from _CVM_HOOK), read against `env`;
// empty when the hook applied nothing.
std::vector<EnvChange> hook_undo_changes(const EnvLookup& env);

// The one line saying that the `cvm` function of `cvm init` is not in this shell, and how to
// add it, for `command` (shell, deactivate).
std::string integration_missing(const std::string& command, Shell shell);

} // namespace cvm::cli
