// zsh: the rc-file code (prompt hook, the cvm function; completion:
// src/cli/completion_scripts.cpp).
#include "shells/shell_common.h"
#include "shells/shell_posix.h"
#include "shells/shell_syntax.h"

namespace cvm::shell_detail {

namespace {

std::string zsh_init(const InitOptions& o) {
    check_value(Shell::Zsh, "the shims folder", o.shims_dir);
    std::string out = init_header(o.hook);
    out += posix_path_first(o.shims_dir);
    std::string functions = posix_cvm_function("zsh", o.hook);
    if (o.hook) {
        functions += posix_hook_functions(o, "zsh");
        functions += R"SH(unset _cvm_off
autoload -Uz add-zsh-hook
add-zsh-hook precmd _cvm_hook
add-zsh-hook chpwd _cvm_hook
_cvm_hook
)SH";
    }
    if (!o.exe.empty())
        functions = replace_all(functions, "command cvm ", "command " + quote_posix(o.exe) + " ");
    return out + functions;
}

} // namespace

const ShellSyntax kZshSyntax = {Shell::Zsh,   "zsh",     nullptr,          ".sh",
                                quote_posix,  posix_env, posix_deactivate, posix_script,
                                posix_assign, zsh_init};

} // namespace cvm::shell_detail
