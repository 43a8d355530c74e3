// The completion scripts: each passes the words up to the cursor to `cvm __complete` and shows
// its answer (protocol in completion.h), so they never need to change when commands do.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "cli/completion.h"
#include "cli/context.h"
#include "shells/shell.h"

namespace cvm::cli {

namespace {

// bash splits `--shell=b` at '=' (COMP_WORDBREAKS): the '=' stays a word of its own, which
// `cvm __complete` skips; readline replaces only the text after the '='.
const char* const kBash = R"SH(# cvm completion for bash: the candidates come from `cvm __complete`.
_cvm_complete() {
    local cur=${COMP_WORDS[COMP_CWORD]} line answer
    local -a words=("${COMP_WORDS[@]:1:COMP_CWORD-1}")
    if [ "${cur}" = "=" ]; then words+=("="); cur=; fi
    COMPREPLY=()
    answer=$(command cvm __complete "${words[@]}" "${cur}" 2>/dev/null) || return 0
    while IFS= read -r line; do
        case ${line} in
        :files) compopt -o filenames 2>/dev/null; while IFS= read -r line; do COMPREPLY+=("${line}"); done < <(compgen -f -- "${cur}") ;;
        :dirs) compopt -o filenames 2>/dev/null; while IFS= read -r line; do COMPREPLY+=("${line}"); done < <(compgen -d -- "${cur}") ;;
        :commands) while IFS= read -r line; do COMPREPLY+=("${line}"); done < <(compgen -c -- "${cur}") ;;
        :*) ;;
        *) COMPREPLY+=("${line%%$'\t'*}") ;;
        esac
    done <<< "${answer}"
}
complete -F _cvm_complete cvm
)SH";

// Works eval'd (after compinit) and as a file `_cvm` in $fpath.
const char* const kZsh = R"SH(#compdef cvm
# cvm completion for zsh: the candidates and their descriptions come from `cvm __complete`.
_cvm() {
    local line directive=none
    local -a described
    for line in "${(@f)$(command cvm __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}"; do
        case ${line} in
        :*) directive=${line#:} ;;
        *$'\t'*) described+=("${${line%%$'\t'*}//:/\\:}:${line#*$'\t'}") ;;
        ?*) described+=("${line//:/\\:}") ;;
        esac
    done
    (( ${#described} )) && _describe -t values cvm described
    case ${directive} in
    files) _files ;;
    dirs) _files -/ ;;
    commands) _command_names -e ;;
    esac
}
if [ "${funcstack[1]}" = "_cvm" ]; then
    _cvm "$@"
elif (( ${+functions[compdef]} )); then
    compdef _cvm cvm
fi
)SH";

const char* const kFish = R"SH(# cvm completion for fish: the candidates and their descriptions come from `cvm __complete`.
function __cvm_complete
    set -l words (commandline -opc)
    set -e words[1]
    set -l current (commandline -ct)
    set -l directive none
    for line in (command cvm __complete $words "$current" 2>/dev/null)
        if string match -q -- ':*' $line
            set directive (string sub -s 2 -- $line)
        else
            printf '%s\n' $line
        end
    end
    switch $directive
        case files
            __fish_complete_path "$current"
        case dirs
            __fish_complete_directories "$current"
        case commands
            __fish_complete_command
    end
end
complete -c cvm -e
complete -c cvm -f -a '(__cvm_complete)'
)SH";

// An empty word goes as `""`: PowerShell 5 drops empty arguments, and `cvm __complete` reads a
// current word of `""` as empty. Files, folders and programs: returning nothing lets PowerShell
// complete paths itself.
const char* const kPowerShell = R"PS(# cvm completion for PowerShell: the candidates and their descriptions come from `cvm __complete`.
Register-ArgumentCompleter -Native -CommandName cvm -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)
    $words = @($commandAst.CommandElements | Where-Object { $_.Extent.StartOffset -lt $cursorPosition } |
        Select-Object -Skip 1 | ForEach-Object { $_.Extent.Text })
    if ($wordToComplete -ne '' -and $words.Count -gt 0) { $words = @($words | Select-Object -First ($words.Count - 1)) }
    $current = if ($wordToComplete -eq '') { '""' } else { $wordToComplete }
    foreach ($line in @(& cvm __complete @words $current 2>$null)) {
        if ($line.StartsWith(':')) { continue }
        $value, $description = $line -split "`t", 2
        if (-not $description) { $description = $value }
        [System.Management.Automation.CompletionResult]::new($value, $value, 'ParameterValue', $description)
    }
}
)PS";

} // namespace

std::string completion_script(const std::string& shell, const std::string& exe) {
    auto with_exe = [&](const char* text, Shell sh, const std::string& call) {
        std::string s = text;
        if (exe.empty()) return s;
        std::string by_path = call + "cvm __complete";
        std::string own = call + shell_quote(sh, exe) + " __complete";
        for (auto at = s.find(by_path); at != std::string::npos;
             at = s.find(by_path, at + own.size()))
            s.replace(at, by_path.size(), own);
        return s;
    };
    if (shell == "bash") return with_exe(kBash, Shell::Bash, "command ");
    if (shell == "zsh") return with_exe(kZsh, Shell::Zsh, "command ");
    if (shell == "fish") return with_exe(kFish, Shell::Fish, "command ");
    if (shell == "powershell" || shell == "pwsh") return with_exe(kPowerShell, Shell::Pwsh, "& ");
    return {};
}

void register_completions(CLI::App& app) {
    auto* cmd = app.add_subcommand("completions", "Print the completion script of a shell (cvm init includes it)");
    auto shell = std::make_shared<std::string>();
    cmd->add_option("shell", *shell, "bash, zsh, fish or powershell")->required();
    cmd->footer("bash: cvm completions bash > ~/.local/share/bash-completion/completions/cvm\n"
                "zsh:  cvm completions zsh > ~/.zfunc/_cvm   (with fpath+=(~/.zfunc) before compinit)\n"
                "fish: cvm completions fish > ~/.config/fish/completions/cvm.fish\n"
                "powershell: cvm completions powershell | Out-String | Invoke-Expression   (in $PROFILE)");
    cmd->callback([shell] {
        std::string text = completion_script(*shell);
        if (text.empty())
            throw UsageError("completions: '" + printable(*shell) +
                             "' is not one of bash, zsh, fish, powershell; e.g. cvm completions bash");
        std::fwrite(text.data(), 1, text.size(), stdout);
    });
}

} // namespace cvm::cli
