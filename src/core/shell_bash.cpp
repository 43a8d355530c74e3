// bash: the rc-file code (completion, prompt hook, the cvm function).
#include <algorithm>

#include "core/shell_detail.h"

namespace cvm::shell_detail {

using platform::Os;

namespace {

const char* const kBashCompletion = R"SH(_cvm_complete() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} IFS=$'\n'
    if [ "${COMP_CWORD}" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$(printf '%s\n' __COMMANDS__ --help --version)" -- "${cur}"))
        return
    fi
    case ${prev} in
        --shell) COMPREPLY=($(compgen -W $'bash\nzsh\nfish\npwsh\ncmd' -- "${cur}")); return ;;
        -o|--output) COMPREPLY=($(compgen -f -- "${cur}")); return ;;
    esac
    case ${COMP_WORDS[1]} in
        init) COMPREPLY=($(compgen -W $'bash\nzsh\nfish\npwsh' -- "${cur}")) ;;
        uninstall) COMPREPLY=($(compgen -W "$(command cvm init --complete ids 2>/dev/null)" -- "${cur}")) ;;
        use|env|script|probe|lock) COMPREPLY=($(compgen -W "$(command cvm init --complete specs 2>/dev/null)"$'\nsystem\n--global\n--shell\n--json' -- "${cur}")) ;;
        exec) COMPREPLY=($(compgen -W $'--spec\n--version\n--' -- "${cur}")) ;;
        list) COMPREPLY=($(compgen -W $'cuda\ncudnn\n--available\n--json' -- "${cur}")) ;;
        current|doctor) COMPREPLY=($(compgen -W $'--json' -- "${cur}")) ;;
        import) COMPREPLY=($(compgen -d -- "${cur}")) ;;
        install) COMPREPLY=($(compgen -f -- "${cur}") $(compgen -W $'cuda\ncudnn\n--components\n--cuda\n--locked' -- "${cur}")) ;;
        which) COMPREPLY=($(compgen -c -- "${cur}")) ;;
        export) COMPREPLY=($(compgen -W $'lmod\ntcl' -- "${cur}")) ;;
    esac
}
complete -o filenames -F _cvm_complete cvm 2>/dev/null || complete -F _cvm_complete cvm
)SH";
} // namespace

std::string bash_init(const InitOptions& o) {
    std::string out =
        "# cvm: the shims first on PATH (once), completion of cvm's commands, the cvm function";
    out += o.hook ? " and the\n# prompt hook that applies the selection of the folder.\n" : ".\n";
    out += posix_path_first(o.shims_dir);
    out += replace_all(kBashCompletion, "__COMMANDS__", command_words());
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
