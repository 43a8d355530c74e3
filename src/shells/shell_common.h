#pragma once
// What every shell's code shares (shell_common.cpp): checks, quoting, list helpers. Below both
// shell.cpp and the shell files (shell_posix.cpp, shell_fish.cpp, ...): it includes neither.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shells/shell_types.h"

namespace cvm::shell_detail {

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

} // namespace cvm::shell_detail
