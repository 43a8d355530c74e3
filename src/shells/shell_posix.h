#pragma once
// What bash and zsh share (shell_posix.cpp): their tables (shell_bash.cpp, shell_zsh.cpp) differ
// only in the rc-file code.
#include <string>
#include <vector>

#include "shells/shell_types.h"

namespace cvm::shell_detail {

std::string posix_env(const std::vector<EnvChange>& changes);
std::string posix_deactivate();
std::string posix_script(const ActivationScript& s);
std::string posix_assign(const std::vector<EnvChange>& changes);
std::string posix_path_first(const std::string& shims);
// The prompt hook `_cvm_hook` and the `cvm` function, for bash and zsh alike; `shell` names the
// shell for `cvm hook-env --shell`.
std::string posix_hook_functions(const InitOptions& o, const char* shell);
std::string posix_cvm_function(const char* shell, bool hook);

} // namespace cvm::shell_detail
