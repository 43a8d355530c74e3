// bash: the rc-file code (prompt hook, the cvm function; completion: src/cli/completion_scripts.cpp).
#include <algorithm>

#include "core/shell_detail.h"

namespace cvm::shell_detail {

using platform::Os;

std::string bash_init(const InitOptions& o) {
    std::string out = init_header(o.hook);
    out += posix_path_first(o.shims_dir);
    std::string functions = posix_cvm_function("bash", o.hook);
    if (o.hook) {
        functions += posix_hook_functions(o, "bash");
        // PROMPT_COMMAND may be an array (bash 5.1+) or a string that other tools also extend.
        functions += R"SH(_cvm_unhook() {
    local _cvm_i
    if [[ -n ${PROMPT_COMMAND+x} && ${PROMPT_COMMAND@a} == *a* ]]; then
        for _cvm_i in "${!PROMPT_COMMAND[@]}"; do
            [[ ${PROMPT_COMMAND[_cvm_i]} != _cvm_hook ]] || unset "PROMPT_COMMAND[_cvm_i]"
        done
    elif [[ -n ${PROMPT_COMMAND-} ]]; then
        PROMPT_COMMAND=${PROMPT_COMMAND//_cvm_hook;/}
        [[ ${PROMPT_COMMAND} != _cvm_hook ]] || PROMPT_COMMAND=
    fi
    unset -f _cvm_hook _cvm_unhook
    unset _cvm_key _cvm_stamp
}
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

} // namespace cvm::shell_detail
