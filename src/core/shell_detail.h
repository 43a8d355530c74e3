#pragma once
// Inside core/shell.h: the pieces each shell's file provides (shell_posix.cpp for what bash and
// zsh share, shell_bash.cpp, shell_zsh.cpp, shell_fish.cpp, shell_pwsh.cpp, shell_cmd.cpp) and
// the helpers they share (shell_common.cpp). shell.cpp only dispatches on the shell.
#include <string>
#include <string_view>
#include <vector>

#include "core/shell.h"

namespace cvm::shell_detail {

// ---- shared (shell_common.cpp)
// Throws ShellError for a value the shell cannot carry (NUL; a line break for cmd).
void check_value(Shell shell, const std::string& name, std::string_view value);
// The distinct names of `changes`, in order; throws ShellError for one that is not a name.
std::vector<std::string> names_of(const std::vector<EnvChange>& changes);
std::string join(const std::vector<std::string>& items, const std::string& sep);
bool next_code_point(std::string_view s, size_t& i, unsigned& cp);
size_t utf16_length(std::string_view s);
std::string hex4(unsigned v);
std::string quote_posix(std::string_view v);
std::string quote_fish(std::string_view v);
std::string quote_pwsh(std::string_view v);
std::string quote_cmd(std::string_view v);
std::string normalized_dir(std::string s, platform::Os os);
const EnvChange* find_change(const std::vector<EnvChange>& changes, const std::string& name);
std::string replace_all(std::string s, const std::string& from, const std::string& to);
// The comment lines that open what `cvm init` prints (the same in every shell's syntax: `#`).
std::string init_header(bool hook);
// The folders an activation script puts first on list variable `name`.
const std::vector<std::string>& script_firsts(const ActivationScript& s, const std::string& name);
// The names of the list variables among `changes` (script_firsts applies to each), and 0, 1 or
// 2 for what their folders hold (programs, libraries, headers), as the scripts' _cvm_keep takes it.
std::vector<std::pair<std::string, int>> script_lists(const std::vector<EnvChange>& changes);

// ---- each shell: activation (`cvm env`), restore (`cvm deactivate`), a standalone script, plain
// assignments (the prompt hook's output) and the rc-file code (`cvm init`).
std::string posix_env(const std::vector<EnvChange>& changes);
std::string posix_deactivate();
std::string posix_script(const ActivationScript& s);
std::string posix_assign(const std::vector<EnvChange>& changes);
std::string posix_path_first(const std::string& shims);
// The prompt hook `_cvm_hook` and the `cvm` function, for bash and zsh alike; `shell` names the
// shell for `cvm hook-env --shell`.
std::string posix_hook_functions(const InitOptions& o, const char* shell);
std::string posix_cvm_function(const char* shell, bool hook);
std::string bash_init(const InitOptions& o);
std::string zsh_init(const InitOptions& o);

std::string fish_env(const std::vector<EnvChange>& changes);
std::string fish_deactivate();
std::string fish_script(const ActivationScript& s);
std::string fish_assign(const std::vector<EnvChange>& changes);
std::string fish_init(const InitOptions& o);

std::string pwsh_env(const std::vector<EnvChange>& changes);
std::string pwsh_deactivate();
std::string pwsh_script(const ActivationScript& s);
std::string pwsh_assign(const std::vector<EnvChange>& changes);
std::string pwsh_init(const InitOptions& o);

std::string cmd_env(const std::vector<EnvChange>& changes);
std::string cmd_deactivate();
std::string cmd_script(const ActivationScript& s);
std::string cmd_assign(const std::vector<EnvChange>& changes);

} // namespace cvm::shell_detail
