// zsh: the rc-file code (prompt hook, the cvm function; completion: src/cli/completion_scripts.cpp).
#include <algorithm>

#include "core/shell_detail.h"

namespace cvm::shell_detail {

using platform::Os;

std::string zsh_init(const InitOptions& o) {
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

} // namespace cvm::shell_detail
