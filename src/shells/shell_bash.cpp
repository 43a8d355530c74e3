// bash: the rc-file code (prompt hook, the cvm function; completion:
// src/cli/completion_scripts.cpp).
#include "shells/shell_common.h"
#include "shells/shell_posix.h"
#include "shells/shell_syntax.h"

namespace cvm::shell_detail {

namespace {

std::string bash_init(const InitOptions& o) {
    check_value(Shell::Bash, "the shims folder", o.shims_dir);
    std::string out = init_header(o.hook);
    out += posix_path_first(o.shims_dir);
    std::string functions = posix_cvm_function("bash", o.hook);
    if (o.hook) {
        functions += posix_hook_functions(o, "bash");
        // PROMPT_COMMAND may be an array (bash 5.1+) or a string that other tools also extend.
        functions += R"SH(unset _cvm_off
if [[ -n ${PROMPT_COMMAND+x} && ${PROMPT_COMMAND@a} == *a* ]]; then
    [[ " ${PROMPT_COMMAND[*]} " == *" _cvm_hook "* ]] || PROMPT_COMMAND=(_cvm_hook "${PROMPT_COMMAND[@]}")
else
    case ";${PROMPT_COMMAND-};" in
        *";_cvm_hook;"*) ;;
        *) PROMPT_COMMAND="_cvm_hook${PROMPT_COMMAND:+;${PROMPT_COMMAND}}" ;;
    esac
fi
_cvm_hook
)SH";
    }
    if (!o.exe.empty())
        functions = replace_all(functions, "command cvm ", "command " + quote_posix(o.exe) + " ");
    return out + functions;
}

} // namespace

const ShellSyntax kBashSyntax = {Shell::Bash,  "bash",    nullptr,          ".sh",
                                 quote_posix,  posix_env, posix_deactivate, posix_script,
                                 posix_assign, bash_init};

} // namespace cvm::shell_detail
