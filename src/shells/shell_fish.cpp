// fish: activation, deactivation, scripts and the rc-file code. Its table: shells/shell_syntax.h.
#include <algorithm>

#include "shells/shell_common.h"
#include "shells/shell_syntax.h"

namespace cvm::shell_detail {

using platform::Os;

namespace {

const char* const kFishDeactivate =
    R"FISH(function cvm_deactivate --description 'Restore what cvm changed'
    # Restores what the variables held before cvm activated anything (see _CVM_SAVED);
    # with `nondestructive` the function stays defined.
    for _cvm_n in (string split -- ' ' "$_CVM_SAVED")
        string match -qr '^[A-Za-z_][A-Za-z0-9_]*$' -- "$_cvm_n"; or continue
        set -l _cvm_o _CVM_OLD_$_cvm_n
        if set -q $_cvm_o
            set -gx $_cvm_n $$_cvm_o
            set -e $_cvm_o
        else
            set -e $_cvm_n
        end
    end
    set -e _CVM_SAVED
    contains -- nondestructive $argv; or functions -e cvm_deactivate
    return 0
end
)FISH";

void fish_save_and_set(std::string& out, const std::vector<EnvChange>& changes,
                       const std::vector<std::string>& skip) {
    auto names = names_of(changes);
    out += "cvm_deactivate nondestructive\n";
    for (const auto& n : names)
        out += "set -q " + n + "; and set -gx _CVM_OLD_" + n + " $" + n + "\n";
    out += "set -gx _CVM_SAVED " + quote_fish(join(names, " ")) + "\n";
    for (const auto& c : changes) {
        if (std::find(skip.begin(), skip.end(), c.name) != skip.end()) continue;
        if (c.value) {
            check_value(Shell::Fish, c.name, *c.value);
            out += "set -gx " + c.name + " " + quote_fish(*c.value) + "\n";
        } else {
            out += "set -e " + c.name + "\n";
        }
    }
}

std::string fish_words(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items)
        out += " " + quote_fish(i);
    return out;
}

std::string fish_script(const ActivationScript& s) {
    const Os os = Os::Linux;
    std::string out;
    out += "# cvm activation script for CUDA " + s.active + ", written by `cvm script`.\n";
    out += "# It needs no cvm to run. In fish:\n";
    out += "#   source " + (s.file_name.empty() ? std::string("activate.fish") : s.file_name) +
           "    activates it in this shell\n";
    out += "#   cvm_deactivate    restores what was there before\n";
    out += kFishDeactivate;
    std::vector<std::string> firsts, layers;
    for (const auto* list : {&s.bin_dirs, &s.lib_dirs, &s.include_dirs})
        for (const auto& d : *list)
            firsts.push_back(normalized_dir(d, os));
    for (const auto& l : s.store_layers)
        layers.push_back(normalized_dir(l, os));
    out += R"FISH(function _cvm_keep --argument-names e kind
    # Fails for another CUDA toolkit's or cuDNN build's folder ($kind: 0 programs, 1 libraries,
    # 2 headers).
    test -n "$e"; or return 1
    set -l n (string trim -r -c / -- "$e")
    test -n "$n"; or set n /
)FISH";
    if (!firsts.empty()) out += "    contains -- \"$n\"" + fish_words(firsts) + "; and return 1\n";
    if (!s.shims_dir.empty())
        out +=
            "    test \"$n\" = " + quote_fish(normalized_dir(s.shims_dir, os)) + "; and return 0\n";
    if (!layers.empty()) {
        out += "    for l in" + fish_words(layers) + "\n";
        out += R"FISH(        test "$n" = "$l"; and return 1
        test (string sub -l (math (string length -- "$l") + 1) -- "$n") = "$l/"; and return 1
    end
)FISH";
    }
    out += "    contains -- \"$n\"";
    for (const char* d : linux_system_dirs())
        out += std::string(" ") + d;
    out += "; and return 0\n";
    out +=
        R"FISH(    string match -qr '^/(usr/)?(lib|include)/.*-linux-gnu[^/]*$' -- "$n"; and return 0
    switch $kind
        case 1
            for f in)FISH";
    for (const char* lib : linux_cuda_library_probes())
        out += std::string(" ") + lib;
    out += R"FISH(
                test -e "$e/$f"; and return 1
            end
            string match -q '*/stubs' -- "$n"; and test -e "$e/libcuda.so"; and return 1
            string match -qr '/cuda(-[0-9][^/]*)?/(lib64|targets/[^/]+/lib)$' -- "$n"; and return 1
        case 2
            for f in)FISH";
    for (const char* h : cuda_header_probes())
        out += std::string(" ") + h;
    out += R"FISH(
                test -e "$e/$f"; and return 1
            end
            string match -qr '/cuda(-[0-9][^/]*)?/(include|targets/[^/]+/include)$' -- "$n"; and return 1
        case '*'
            test -e "$e/nvcc"; and return 1
            string match -qr '/cuda(-[0-9][^/]*)?/bin$' -- "$n"; and return 1
    end
    return 0
end
)FISH";
    auto lists = script_lists(s.changes);
    std::vector<std::string> skip;
    for (const auto& l : lists)
        skip.push_back(l.first);
    fish_save_and_set(out, s.changes, skip);
    for (const auto& [var, kind] : lists) {
        const auto& first = script_firsts(s, var);
        for (const auto& f : first)
            check_value(Shell::Fish, var, f);
        out += "set -l _cvm_r" + fish_words(first) + "\n";
        // Variables whose names end in PATH are lists in fish (joined with ':' for programs).
        out += "for _cvm_d in $" + var + "\n";
        out +=
            "    _cvm_keep \"$_cvm_d\" " + std::to_string(kind) + "; and set -a _cvm_r $_cvm_d\n";
        out += "end\n";
        if (var == "PATH")
            out += "set -gx PATH $_cvm_r\n";
        else
            out += "if set -q _cvm_r[1]\n    set -gx " + var + " $_cvm_r\nelse\n    set -e " + var +
                   "\nend\n";
        out += "set -e _cvm_r\n";
    }
    out += "functions -e _cvm_keep\n";
    return out;
}

std::string fish_path_first(const std::string& shims) {
    std::string out;
    out += "set -l _cvm_shims " + quote_fish(shims) + "\n";
    out += "while set -l _cvm_i (contains -i -- $_cvm_shims $PATH)\n";
    out += "    set -e PATH[$_cvm_i]\n";
    out += "end\n";
    out += "set -gx PATH $_cvm_shims $PATH\n";
    out += "set -e _cvm_shims _cvm_i\n";
    return out;
}

std::string fish_env(const std::vector<EnvChange>& changes) {
    std::string out = kFishDeactivate;
    fish_save_and_set(out, changes, {});
    return out;
}

std::string fish_deactivate() {
    return std::string(kFishDeactivate) + "cvm_deactivate\n";
}

std::string fish_assign(const std::vector<EnvChange>& changes) {
    std::string out;
    for (const auto& c : changes) {
        if (c.value) {
            check_value(Shell::Fish, c.name, *c.value);
            // PATH-like lists are fish lists: split them so fish keeps them as lists.
            if (is_list_variable(c.name))
                out += "set -gx " + c.name + " (string split -- : " + quote_fish(*c.value) + ")\n";
            else
                out += "set -gx " + c.name + " " + quote_fish(*c.value) + "\n";
        } else {
            out += "set -e " + c.name + "\n";
        }
    }
    return out;
}

std::string fish_init(const InitOptions& o) {
    std::string out = init_header(o.hook);
    out += fish_path_first(o.shims_dir);
    std::string functions = R"FISH(function cvm --description 'CUDA version manager'
    switch "$argv[1]"
        case shell deactivate
            if contains -- -h $argv; or contains -- --help $argv; or contains -- --help-all $argv
                command cvm $argv
                return
            end
            set -l _cvm_code (command cvm $argv --shell fish)FISH";
    // With the hook, cvm is told whether it is on, to say what the function then does to it.
    if (o.hook)
        functions += R"FISH( --prompt-hook (set -q _cvm_off; and echo off; or echo on))FISH";
    functions += R"FISH(); or return
            string join \n -- $_cvm_code | source)FISH";
    if (o.hook)
        functions += R"FISH(
            if test "$argv[1]" = deactivate
                set -g _cvm_off 1
            else
                set -e _cvm_off
                set -g _cvm_key
                _cvm_hook
            end)FISH";
    functions += R"FISH(
            return 0
        case '*'
            command cvm $argv
    end
end
)FISH";
    if (o.hook) {
        std::string watched;
        for (const auto& f : o.watched)
            watched += " " + quote_fish(f);
        functions += "set -g _cvm_stamp " + quote_fish(o.stamp_dir) + "/$fish_pid\n";
        functions += R"FISH(function _cvm_hook --on-variable PWD --on-event fish_prompt
    # The prompt hook (cvm init): applies the selection of this folder when it changed. Cheap
    # when nothing did: a few builtins, no process.
    set -l _cvm_status $status
    # Off after `cvm deactivate`, until `cvm shell` (or `cvm init` again).
    set -q _cvm_off; and return $_cvm_status
    # The nearest .cudaversion: every folder's from / down to $PWD, the deepest that exists.
    # A command substitution costs more than a test in fish, so there are two, not one a folder.
    set -l c /.cudaversion
    set -l p
    for part in (string split -n / -- $PWD)
        set p "$p/$part"
        set -a c "$p/.cudaversion"
    end
    set -l f (path filter -- $c)[-1]
    set -l m -
    set -q _CVM_SAVED; and set m m
    set -l k "$PWD|$CVM_VERSION|$m|$f"
    test -n "$f"; or set f )FISH" +
                     quote_fish(o.global_file) + R"FISH(
    if test "$k" = "$_cvm_key"
        # Unchanged when the stamp exists and these are older (seconds: equal counts as changed).
        set -l x (path filter -- $_cvm_stamp $f)FISH" +
                     watched + R"FISH()
        if test "$x[1]" = "$_cvm_stamp"; and set -l t (path mtime -- $x)
            set -l s $t[1]
            set -e t[1]
            set -l fresh 1
            for y in $t
                test $y -lt $s; or set fresh 0
            end
            test $fresh = 1; and return $_cvm_status
        end
    end
    set -g _cvm_key $k
    command cvm hook-env --shell fish --pid $fish_pid | source
    return $_cvm_status
end
set -e _cvm_off
_cvm_hook
)FISH";
    }
    if (!o.exe.empty())
        functions = replace_all(functions, "command cvm ", "command " + quote_fish(o.exe) + " ");
    return out + functions;
}

} // namespace

const ShellSyntax kFishSyntax = {Shell::Fish, "fish",          nullptr,     ".fish",     quote_fish,
                                 fish_env,    fish_deactivate, fish_script, fish_assign, fish_init};

} // namespace cvm::shell_detail
