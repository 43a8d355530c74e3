// zsh: the rc-file code (completion, prompt hook, the cvm function).
#include <algorithm>

#include "core/shell_detail.h"

namespace cvm::shell_detail {

using platform::Os;

namespace {

const char* const kZshCompletion = R"SH(_cvm() {
    local -a cmds
    cmds=(__COMMANDS__)
    if (( CURRENT == 2 )); then compadd -- $cmds --help --version; return; fi
    case ${words[CURRENT-1]} in
        --shell) compadd -- bash zsh fish pwsh cmd; return ;;
        -o|--output) _files; return ;;
    esac
    case ${words[2]} in
        init) compadd -- bash zsh fish pwsh ;;
        uninstall) compadd -- ${(f)"$(command cvm init --complete ids 2>/dev/null)"} ;;
        use|env|script|probe|lock) compadd -- ${(f)"$(command cvm init --complete specs 2>/dev/null)"} system --global --shell --json ;;
        exec) compadd -- --spec --version -- ;;
        list) compadd -- cuda cudnn --available --json ;;
        current|doctor) compadd -- --json ;;
        import) _files -/ ;;
        install) compadd -- cuda cudnn --components --cuda --locked; _files ;;
        which) _command_names ;;
        export) compadd -- lmod tcl ;;
    esac
}
if (( ${+functions[compdef]} )); then compdef _cvm cvm; fi
)SH";
} // namespace

std::string zsh_init(const InitOptions& o) {
    std::string out =
        "# cvm: the shims first on PATH (once), completion of cvm's commands, the cvm function";
    out += o.hook ? " and the\n# prompt hook that applies the selection of the folder.\n" : ".\n";
    out += posix_path_first(o.shims_dir);
    out += replace_all(kZshCompletion, "__COMMANDS__", command_words());
    std::string functions = posix_cvm_function("zsh", o.hook);
    if (o.hook) {
        functions += posix_hook_functions(o, "zsh");
        functions += R"SH(_cvm_unhook() {
    add-zsh-hook -d precmd _cvm_hook
    add-zsh-hook -d chpwd _cvm_hook
    unfunction _cvm_hook _cvm_unhook
    unset _cvm_key _cvm_stamp
}
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
