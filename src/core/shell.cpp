#include "core/shell.h"

#include <algorithm>
#include <cstdio>

namespace cvm {

namespace {

using platform::Os;

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    return out;
}

void check_value(Shell shell, const std::string& name, std::string_view value) {
    if (value.find('\0') != std::string_view::npos)
        throw ShellError("the value of " + name + " contains a NUL character");
    if (shell == Shell::Cmd && value.find_first_of("\r\n") != std::string_view::npos)
        throw ShellError("the value of " + name +
                         " contains a line break, which cmd cannot set; rename the folder or use "
                         "another shell");
}

std::vector<std::string> names_of(const std::vector<EnvChange>& changes) {
    std::vector<std::string> names;
    for (const auto& c : changes) {
        if (!is_variable_name(c.name))
            throw ShellError("'" + printable(c.name) + "' is not a variable name a shell can set");
        if (std::find(names.begin(), names.end(), c.name) == names.end()) names.push_back(c.name);
    }
    return names;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += sep;
        out += items[i];
    }
    return out;
}

// Decodes one UTF-8 code point at `i`; returns false on malformed input.
bool next_code_point(std::string_view s, size_t& i, unsigned& cp) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned c = byte(i);
    size_t extra;
    if (c < 0x80) {
        cp = c;
        extra = 0;
    } else if ((c & 0xE0) == 0xC0) {
        cp = c & 0x1F;
        extra = 1;
    } else if ((c & 0xF0) == 0xE0) {
        cp = c & 0x0F;
        extra = 2;
    } else if ((c & 0xF8) == 0xF0) {
        cp = c & 0x07;
        extra = 3;
    } else {
        return false;
    }
    if (i + extra >= s.size()) return false;
    for (size_t k = 1; k <= extra; ++k) {
        unsigned b = byte(i + k);
        if ((b & 0xC0) != 0x80) return false;
        cp = (cp << 6) | (b & 0x3F);
    }
    static const unsigned min_for[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min_for[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += extra + 1;
    return true;
}

// Length in UTF-16 code units (how cmd counts for %var:~n,m%).
size_t utf16_length(std::string_view s) {
    size_t n = 0;
    for (size_t i = 0; i < s.size();) {
        unsigned cp = 0;
        if (!next_code_point(s, i, cp)) {
            ++i; // counted as one replacement character
            ++n;
            continue;
        }
        n += cp >= 0x10000 ? 2 : 1;
    }
    return n;
}

std::string hex4(unsigned v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%04X", v);
    return buf;
}

std::string quote_posix(std::string_view v) {
    std::string out = "'";
    for (char c : v) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

std::string quote_fish(std::string_view v) {
    std::string out = "'";
    for (char c : v) {
        if (c == '\\' || c == '\'') out += '\\';
        out += c;
    }
    return out + "'";
}

std::string quote_pwsh(std::string_view v) {
    bool ascii = std::all_of(v.begin(), v.end(),
                             [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if (ascii) {
        std::string out = "'";
        for (char c : v) {
            if (c == '\'') out += '\'';
            out += c;
        }
        return out + "'";
    }
    // Non-ASCII characters become [char] codes: PowerShell reads a native command's output and a
    // .ps1 without a BOM in the console's code page, which is rarely UTF-8 on Windows.
    std::string out = "('";
    for (size_t i = 0; i < v.size();) {
        unsigned char c = static_cast<unsigned char>(v[i]);
        if (c < 0x80) {
            if (c == '\'') out += '\'';
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        unsigned cp = 0;
        if (!next_code_point(v, i, cp))
            throw ShellError("'" + printable(v) +
                             "' is not valid UTF-8; PowerShell cannot carry it");
        out += "'";
        if (cp >= 0x10000) {
            unsigned u = cp - 0x10000;
            out += "+[char]" + hex4(0xD800 + (u >> 10)) + "+[char]" + hex4(0xDC00 + (u & 0x3FF));
        } else {
            out += "+[char]" + hex4(cp);
        }
        out += "+'";
    }
    return out + "')";
}

std::string quote_cmd(std::string_view v) {
    std::string out;
    for (char c : v) {
        switch (c) {
        case '%':
            out += "%%";
            break;
        case '^':
        case '&':
        case '|':
        case '<':
        case '>':
        case '(':
        case ')':
        case '"':
            out += '^';
            out += c;
            break;
        default:
            out += c;
        }
    }
    return out;
}

// Trailing separators removed, as is_foreign_cuda_dir compares entries.
std::string normalized_dir(std::string s, Os os) {
    if (os == Os::Windows) {
        std::replace(s.begin(), s.end(), '/', '\\');
        while (s.size() > 3 && s.back() == '\\')
            s.pop_back();
    } else {
        while (s.size() > 1 && s.back() == '/')
            s.pop_back();
    }
    return s;
}

const EnvChange* find_change(const std::vector<EnvChange>& changes, const std::string& name) {
    for (const auto& c : changes)
        if (c.name == name) return &c;
    return nullptr;
}

// ---------------------------------------------------------------- bash and zsh

const char* const kPosixDeactivate = R"SH(cvm_deactivate() {
    # Restores what the variables held before cvm activated anything (see _CVM_SAVED);
    # with `nondestructive` the function stays defined.
    local _cvm_n IFS=' '
    if [ -n "${ZSH_VERSION-}" ]; then setopt localoptions shwordsplit noglob; fi
    for _cvm_n in ${_CVM_SAVED-}; do
        case ${_cvm_n} in ''|[0-9]*|*[!A-Za-z0-9_]*) continue ;; esac
        if eval "[ -n \"\${_CVM_OLD_${_cvm_n}+x}\" ]"; then
            eval "export ${_cvm_n}=\"\${_CVM_OLD_${_cvm_n}}\""
            unset "_CVM_OLD_${_cvm_n}"
        else
            unset "${_cvm_n}"
        fi
    done
    unset _CVM_SAVED
    if [ "${1-}" != nondestructive ]; then unset -f cvm_deactivate; fi
    return 0
}
)SH";

void posix_save_and_set(std::string& out, const std::vector<EnvChange>& changes,
                        const std::vector<std::string>& skip) {
    auto names = names_of(changes);
    out += "cvm_deactivate nondestructive\n";
    for (const auto& n : names)
        out +=
            "if [ -n \"${" + n + "+x}\" ]; then export _CVM_OLD_" + n + "=\"${" + n + "}\"; fi\n";
    out += "export _CVM_SAVED=" + quote_posix(join(names, " ")) + "\n";
    for (const auto& c : changes) {
        if (std::find(skip.begin(), skip.end(), c.name) != skip.end()) continue;
        if (c.value) {
            check_value(Shell::Bash, c.name, *c.value);
            out += "export " + c.name + "=" + quote_posix(*c.value) + "\n";
        } else {
            out += "unset " + c.name + "\n";
        }
    }
}

std::string posix_case_alternatives(const std::vector<std::string>& items, bool with_children) {
    std::string out;
    for (const auto& item : items) {
        if (!out.empty()) out += "|";
        out += quote_posix(item);
        if (with_children) out += "|" + quote_posix(item) + "/*";
    }
    return out;
}

std::string posix_script(const ActivationScript& s) {
    const Os os = Os::Linux; // bash, zsh and fish scripts follow the Linux rules
    std::string out;
    out += "# cvm activation script for CUDA " + s.active + ", written by `cvm script`.\n";
    out += "# It needs no cvm to run. In bash or zsh:\n";
    out += "#   . ./" + (s.file_name.empty() ? std::string("activate.sh") : s.file_name) +
           "    activates it in this shell\n";
    out += "#   cvm_deactivate    restores what was there before\n";
    out += kPosixDeactivate;
    std::vector<std::string> firsts;
    for (const auto& d : s.bin_dirs)
        firsts.push_back(normalized_dir(d, os));
    for (const auto& d : s.lib_dirs)
        firsts.push_back(normalized_dir(d, os));
    std::vector<std::string> layers;
    for (const auto& l : s.store_layers)
        layers.push_back(normalized_dir(l, os));
    for (const auto& d : firsts)
        check_value(Shell::Bash, "a toolkit folder", d);
    out += R"SH(_cvm_keep() {
    # $1: a PATH or LD_LIBRARY_PATH entry, $2: 1 for library folders.
    # Fails for another CUDA toolkit's or cuDNN build's folder.
    _cvm_e=${1}
    while [ "${#_cvm_e}" -gt 1 ] && [ "${_cvm_e%/}" != "${_cvm_e}" ]; do _cvm_e=${_cvm_e%/}; done
    [ -n "${_cvm_e}" ] || return 1
    case ${_cvm_e} in
)SH";
    if (!firsts.empty())
        out += "        " + posix_case_alternatives(firsts, false) + ") return 1 ;;\n";
    if (!s.shims_dir.empty())
        out += "        " + quote_posix(normalized_dir(s.shims_dir, os)) + ") return 0 ;;\n";
    if (!layers.empty())
        out += "        " + posix_case_alternatives(layers, true) + ") return 1 ;;\n";
    out += "        ";
    for (size_t i = 0; i < linux_system_dirs().size(); ++i)
        out += std::string(i ? "|" : "") + linux_system_dirs()[i];
    out += ") return 0 ;;\n";
    out += R"SH(        /usr/lib/*-linux-gnu*|/lib/*-linux-gnu*)
            case ${_cvm_e#*-linux-gnu} in */*) ;; *) return 0 ;; esac ;;
    esac
    if [ "${2}" = 1 ]; then
        for _cvm_l in)SH";
    for (const char* lib : linux_cuda_library_probes())
        out += std::string(" ") + lib;
    out += R"SH(; do
            if [ -e "${1}/${_cvm_l}" ]; then return 1; fi
        done
        case ${_cvm_e} in */cuda-[0-9]*/lib64|*/cuda/lib64|*/cuda-[0-9]*/targets/*/lib|*/cuda/targets/*/lib) return 1 ;; esac
    else
        if [ -e "${1}/nvcc" ]; then return 1; fi
        case ${_cvm_e} in */cuda-[0-9]*/bin|*/cuda/bin) return 1 ;; esac
    fi
    return 0
}
_cvm_filter() {
    # $1: a colon-separated list, $2: 1 for library folders; appends what stays to _cvm_r.
    _cvm_rest=${1}:
    while [ -n "${_cvm_rest}" ]; do
        _cvm_d=${_cvm_rest%%:*}
        _cvm_rest=${_cvm_rest#*:}
        if _cvm_keep "${_cvm_d}" "${2}"; then _cvm_r=${_cvm_r:+${_cvm_r}:}${_cvm_d}; fi
    done
}
)SH";
    posix_save_and_set(out, s.changes, {"PATH", "LD_LIBRARY_PATH"});
    auto filtered = [&](const std::string& var, const std::vector<std::string>& first, bool lib) {
        std::string joined = join(first, ":");
        check_value(Shell::Bash, var, joined);
        out += "_cvm_r=" + quote_posix(joined) + "\n";
        out += "if [ -n \"${" + var + "+x}\" ]; then _cvm_filter \"${" + var + "}\" " +
               (lib ? "1" : "0") + "; fi\n";
        out += "export " + var + "=\"${_cvm_r}\"\n";
    };
    if (find_change(s.changes, "PATH")) filtered("PATH", s.bin_dirs, false);
    if (find_change(s.changes, "LD_LIBRARY_PATH")) filtered("LD_LIBRARY_PATH", s.lib_dirs, true);
    out += "unset -f _cvm_keep _cvm_filter\n";
    out += "unset _cvm_r _cvm_rest _cvm_d _cvm_e _cvm_l\n";
    return out;
}

// ---------------------------------------------------------------- fish

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
    for (const auto& d : s.bin_dirs)
        firsts.push_back(normalized_dir(d, os));
    for (const auto& d : s.lib_dirs)
        firsts.push_back(normalized_dir(d, os));
    for (const auto& l : s.store_layers)
        layers.push_back(normalized_dir(l, os));
    out += R"FISH(function _cvm_keep --argument-names e lib
    # Fails for another CUDA toolkit's or cuDNN build's folder ($lib: 1 for library folders).
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
    out += R"FISH(    string match -qr '^/(usr/)?lib/.*-linux-gnu[^/]*$' -- "$n"; and return 0
    if test "$lib" = 1
        for f in)FISH";
    for (const char* lib : linux_cuda_library_probes())
        out += std::string(" ") + lib;
    out += R"FISH(
            test -e "$e/$f"; and return 1
        end
        string match -qr '/cuda(-[0-9][^/]*)?/(lib64|targets/[^/]+/lib)$' -- "$n"; and return 1
    else
        test -e "$e/nvcc"; and return 1
        string match -qr '/cuda(-[0-9][^/]*)?/bin$' -- "$n"; and return 1
    end
    return 0
end
)FISH";
    fish_save_and_set(out, s.changes, {"PATH", "LD_LIBRARY_PATH"});
    auto filtered = [&](const std::string& var, const std::vector<std::string>& first, bool lib) {
        for (const auto& f : first)
            check_value(Shell::Fish, var, f);
        out += "set -l _cvm_r" + fish_words(first) + "\n";
        out += "for _cvm_d in $" + var + "\n";
        out += std::string("    _cvm_keep \"$_cvm_d\" ") + (lib ? "1" : "0") +
               "; and set -a _cvm_r $_cvm_d\n";
        out += "end\n";
        out += "set -gx " + var + " $_cvm_r\n";
        out += "set -e _cvm_r\n";
    };
    if (find_change(s.changes, "PATH")) filtered("PATH", s.bin_dirs, false);
    if (find_change(s.changes, "LD_LIBRARY_PATH")) filtered("LD_LIBRARY_PATH", s.lib_dirs, true);
    out += "functions -e _cvm_keep\n";
    return out;
}

// ---------------------------------------------------------------- PowerShell

const char* const kPwshDeactivate = R"PS(function global:cvm_deactivate {
    # Restores what the variables held before cvm activated anything (see _CVM_SAVED);
    # with -NonDestructive the function stays defined.
    param([switch]$NonDestructive)
    foreach ($n in ([string]$env:_CVM_SAVED).Split(' ')) {
        if ($n -cnotmatch '^[A-Za-z_][A-Za-z0-9_]*$') { continue }
        [Environment]::SetEnvironmentVariable($n, [Environment]::GetEnvironmentVariable("_CVM_OLD_$n"))
        [Environment]::SetEnvironmentVariable("_CVM_OLD_$n", $null)
    }
    [Environment]::SetEnvironmentVariable('_CVM_SAVED', $null)
    if (-not $NonDestructive) { Remove-Item -LiteralPath Function:\cvm_deactivate -ErrorAction SilentlyContinue }
}
)PS";

void pwsh_save_and_set(std::string& out, const std::vector<EnvChange>& changes,
                       const std::vector<std::string>& skip) {
    auto names = names_of(changes);
    out += "cvm_deactivate -NonDestructive\n";
    std::string list;
    for (const auto& n : names)
        list += std::string(list.empty() ? "" : ", ") + "'" + n + "'";
    out += "foreach ($_cvm_n in @(" + list + ")) {\n";
    out += "    $_cvm_v = [Environment]::GetEnvironmentVariable($_cvm_n)\n";
    out +=
        "    if ($null -ne $_cvm_v) { [Environment]::SetEnvironmentVariable(\"_CVM_OLD_$_cvm_n\", "
        "$_cvm_v) }\n";
    out += "}\n";
    out += "$env:_CVM_SAVED = " + quote_pwsh(join(names, " ")) + "\n";
    for (const auto& c : changes) {
        if (std::find(skip.begin(), skip.end(), c.name) != skip.end()) continue;
        if (c.value) {
            check_value(Shell::Pwsh, c.name, *c.value);
            out += "$env:" + c.name + " = " + quote_pwsh(*c.value) + "\n";
        } else {
            out += "$env:" + c.name + " = $null\n";
        }
    }
    out += "Remove-Variable -Name _cvm_n, _cvm_v -ErrorAction SilentlyContinue\n";
}

std::string pwsh_array(const std::vector<std::string>& items) {
    std::string out = "@(";
    for (size_t i = 0; i < items.size(); ++i)
        out += (i ? ", " : "") + quote_pwsh(items[i]);
    return out + ")";
}

std::string pwsh_script(const ActivationScript& s) {
    const Os os = s.os;
    const bool win = os == Os::Windows;
    std::string name = s.file_name.empty() ? std::string("activate.ps1") : s.file_name;
    std::string out;
    out += "# cvm activation script for CUDA " + s.active + ", written by `cvm script`.\n";
    out += "# It needs no cvm to run. In PowerShell:\n";
    out += "#   . ./" + name + "               activates it in this session\n";
    out += "#   . ./" + name + " deactivate    (or cvm_deactivate) restores what was there\n";
    out += "param([string]$Action)\n";
    out += kPwshDeactivate;
    out += "if ($Action -eq 'deactivate') { cvm_deactivate; return }\n";
    out += "if ($Action) { Write-Error \"" + name +
           ": unknown argument '$Action'; use deactivate\"; return }\n";
    std::vector<std::string> firsts, layers;
    for (const auto& d : s.bin_dirs)
        firsts.push_back(normalized_dir(d, os));
    for (const auto& d : s.lib_dirs)
        firsts.push_back(normalized_dir(d, os));
    for (const auto& l : s.store_layers)
        layers.push_back(normalized_dir(l, os));
    const std::string eq = win ? "-ieq" : "-ceq";
    const std::string cmp = win ? "OrdinalIgnoreCase" : "Ordinal";
    const std::string sep = win ? "\\" : "/";
    out += "$_cvm_first = " + pwsh_array(firsts) + "\n";
    out += "$_cvm_layers = " + pwsh_array(layers) + "\n";
    out += "$_cvm_shims = " + quote_pwsh(normalized_dir(s.shims_dir, os)) + "\n";
    out += "function _cvm_keep([string]$e, [bool]$lib) {\n";
    out += "    # False for another CUDA toolkit's or cuDNN build's folder.\n";
    out += "    if ($e -eq '') { return $false }\n";
    if (win) {
        out += "    $n = $e.Replace('/', '\\')\n";
        out += "    while ($n.Length -gt 3 -and $n.EndsWith('\\')) { $n = $n.Substring(0, "
               "$n.Length - 1) }\n";
    } else {
        out += "    $n = $e\n";
        out += "    while ($n.Length -gt 1 -and $n.EndsWith('/')) { $n = $n.Substring(0, $n.Length "
               "- 1) }\n";
    }
    out += "    foreach ($f in $_cvm_first) { if ($n " + eq + " $f) { return $false } }\n";
    out += "    if ($_cvm_shims -ne '' -and $n " + eq + " $_cvm_shims) { return $true }\n";
    out += "    foreach ($l in $_cvm_layers) {\n";
    out += "        if ($n " + eq + " $l -or $n.StartsWith($l + '" + sep +
           "', [StringComparison]::" + cmp + ")) { return $false }\n";
    out += "    }\n";
    if (win) {
        out += "    if ($n -imatch '^.:\\\\windows') { return $true }\n";
        out += "    if ($n.IndexOf('\\nvidia gpu computing toolkit\\cuda\\', "
               "[StringComparison]::OrdinalIgnoreCase) -ge 0) { return $false }\n";
        out += "    foreach ($f in @(";
        for (size_t i = 0; i < windows_cuda_bin_probes().size(); ++i)
            out += std::string(i ? ", " : "") + "'" + windows_cuda_bin_probes()[i] + "'";
        out += ")) { if (Test-Path -LiteralPath (Join-Path $e $f)) { return $false } }\n";
    } else {
        out += "    if (@(";
        for (size_t i = 0; i < linux_system_dirs().size(); ++i)
            out += std::string(i ? ", " : "") + "'" + linux_system_dirs()[i] + "'";
        out += ") -ccontains $n) { return $true }\n";
        out += "    if ($n -cmatch '^/(usr/)?lib/.*-linux-gnu[^/]*$') { return $true }\n";
        out += "    if ($lib) {\n";
        out += "        foreach ($f in @(";
        for (size_t i = 0; i < linux_cuda_library_probes().size(); ++i)
            out += std::string(i ? ", " : "") + "'" + linux_cuda_library_probes()[i] + "'";
        out += ")) { if (Test-Path -LiteralPath (Join-Path $e $f)) { return $false } }\n";
        out += "        if ($n -cmatch '/cuda(-[0-9][^/]*)?/(lib64|targets/[^/]+/lib)$') { return "
               "$false }\n";
        out += "    } else {\n";
        out += "        if (Test-Path -LiteralPath (Join-Path $e 'nvcc')) { return $false }\n";
        out += "        if ($n -cmatch '/cuda(-[0-9][^/]*)?/bin$') { return $false }\n";
        out += "    }\n";
    }
    out += "    return $true\n";
    out += "}\n";
    pwsh_save_and_set(out, s.changes, {"PATH", "LD_LIBRARY_PATH"});
    const std::string list_sep = win ? ";" : ":";
    auto filtered = [&](const std::string& var, const std::vector<std::string>& first, bool lib) {
        out += "$_cvm_r = [System.Collections.Generic.List[string]]::new()\n";
        for (const auto& f : first)
            out += "$_cvm_r.Add(" + quote_pwsh(f) + ")\n";
        out += "if ($null -ne $env:" + var + ") { foreach ($_cvm_d in $env:" + var + ".Split('" +
               list_sep + "')) { if (_cvm_keep $_cvm_d $" + (lib ? "true" : "false") +
               ") { $_cvm_r.Add($_cvm_d) } } }\n";
        out += "$env:" + var + " = $_cvm_r -join '" + list_sep + "'\n";
    };
    if (find_change(s.changes, "PATH")) filtered("PATH", s.bin_dirs, false);
    if (find_change(s.changes, "LD_LIBRARY_PATH")) filtered("LD_LIBRARY_PATH", s.lib_dirs, true);
    out += "Remove-Item -LiteralPath Function:\\_cvm_keep -ErrorAction SilentlyContinue\n";
    out += "Remove-Variable -Name _cvm_first, _cvm_layers, _cvm_shims, _cvm_r, _cvm_d "
           "-ErrorAction SilentlyContinue\n";
    return out;
}

// ---------------------------------------------------------------- cmd
// Batch files run with delayed expansion off (the default; checked at the top), so '!' is an
// ordinary character. Static values are caret-escaped `set NAME=...` lines. Values read at run
// time pass only through FOR variables (which cmd does not parse again) or through %expansions%
// inside double quotes, which is safe because nothing that reaches them holds a '"' (Windows
// file names cannot, and quotes are dropped from PATH entries first).

std::string crlf(const char* text) {
    std::string out;
    for (const char* p = text; *p; ++p) {
        if (*p == '\n') out += '\r';
        out += *p;
    }
    return out;
}

const char* const kCmdSubroutines = R"BAT(goto :eof

:cvm_save
set "_CVM_OLD_%~1="
if defined %~1 for /f "tokens=1* delims==" %%A in ('set %~1') do if /i "%%A"=="%~1" set "_CVM_OLD_%~1=%%B"
goto :eof

:cvm_restore
if not defined _CVM_SAVED goto :eof
for %%N in (%_CVM_SAVED%) do call :cvm_restore_one %%N
set "_CVM_SAVED="
goto :eof

:cvm_restore_one
set "_CVM_HAD="
if defined _CVM_OLD_%~1 for /f "tokens=1* delims==" %%A in ('set _CVM_OLD_%~1') do if /i "%%A"=="_CVM_OLD_%~1" (
    set "%~1=%%B"
    set "_CVM_HAD=1"
)
if not defined _CVM_HAD set "%~1="
set "_CVM_OLD_%~1="
set "_CVM_HAD="
goto :eof
)BAT";

void cmd_prologue(std::string& out, const std::string& header, const std::string& file_name) {
    out += "@echo off\r\n";
    out += header;
    // "!!" is empty only when delayed expansion is on, which would eat '!' in values.
    out += "if \"!!\"==\"\" (\r\n";
    out += "    echo " + file_name +
           ": delayed expansion is on; run this from a cmd started without /V:ON 1>&2\r\n";
    out += "    exit /b 1\r\n";
    out += ")\r\n";
    // The rest of the file is UTF-8; the console's code page comes back at the end.
    out += "set \"_CVM_CP=\"\r\n";
    out += "for /f \"tokens=2 delims=:.\" %%C in ('chcp') do set \"_CVM_CP=%%C\"\r\n";
    out += "chcp 65001 >nul\r\n";
}

void cmd_epilogue(std::string& out, const std::string& extra_subroutines = {}) {
    out += ":cvm_done\r\n";
    out += "if defined _CVM_CP chcp %_CVM_CP% >nul 2>nul\r\n";
    out += "set \"_CVM_CP=\"\r\n";
    out += crlf(kCmdSubroutines);
    out += extra_subroutines;
}

void cmd_save_and_set(std::string& out, const std::vector<EnvChange>& changes,
                      const std::vector<std::string>& skip) {
    auto names = names_of(changes);
    out += "call :cvm_restore\r\n";
    for (const auto& n : names)
        out += "call :cvm_save " + n + "\r\n";
    out += "set \"_CVM_SAVED=" + join(names, " ") + "\"\r\n";
    for (const auto& c : changes) {
        if (std::find(skip.begin(), skip.end(), c.name) != skip.end()) continue;
        if (c.value) {
            check_value(Shell::Cmd, c.name, *c.value);
            out += "set " + c.name + "=" + quote_cmd(*c.value) + "\r\n";
        } else {
            out += "set " + c.name + "=\r\n";
        }
    }
}

std::string cmd_header(const std::string& active, const std::string& name, bool script) {
    std::string h;
    if (script) {
        h += "rem cvm activation script for CUDA " + active + ", written by `cvm script`.\r\n";
        h += "rem It needs no cvm to run. In cmd:\r\n";
        h += "rem   call " + name + "              activates it in this window\r\n";
        h += "rem   call " + name + " deactivate   restores what was there before\r\n";
    } else {
        h += "rem cvm activation for CUDA " + active +
             " (cvm env --shell cmd); undo with the "
             "output of `cvm deactivate --shell cmd`.\r\n";
    }
    return h;
}

// A value that is compared inside double quotes: it must not hold one.
void check_cmd_quoted(const std::string& what, const std::string& value) {
    check_value(Shell::Cmd, what, value);
    if (value.find('"') != std::string::npos)
        throw ShellError(what + " " + printable(value) +
                         " contains '\"', which cmd cannot compare");
}

std::string cmd_script(const ActivationScript& s) {
    const Os os = Os::Windows;
    std::string name = s.file_name.empty() ? std::string("activate.bat") : s.file_name;
    for (char c : name)
        if (static_cast<unsigned char>(c) < 0x20 ||
            std::string("%^&|<>()\"!").find(c) != std::string::npos)
            throw ShellError("'" + printable(name) +
                             "' is not a file name a batch file can use for itself");
    std::string out;
    cmd_prologue(out, cmd_header(s.active, name, true), name);
    out += "if /i \"%~1\"==\"deactivate\" (\r\n";
    out += "    call :cvm_restore\r\n";
    out += "    goto :cvm_done\r\n";
    out += ")\r\n";
    out += "if not \"%~1\"==\"\" (\r\n";
    out += "    echo " + name + ": unknown argument; use no argument or deactivate 1>&2\r\n";
    out += "    goto :cvm_done\r\n";
    out += ")\r\n";
    cmd_save_and_set(out, s.changes, {"PATH"});
    std::string entry; // the subroutine that looks at one PATH entry
    if (find_change(s.changes, "PATH")) {
        std::vector<std::string> firsts, layers;
        for (const auto& d : s.bin_dirs)
            firsts.push_back(normalized_dir(d, os));
        for (const auto& l : s.store_layers)
            layers.push_back(normalized_dir(l, os));
        std::string shims = normalized_dir(s.shims_dir, os);
        // Fixed strings live in variables, so that the comparisons never parse them.
        for (size_t i = 0; i < firsts.size(); ++i) {
            check_cmd_quoted("the toolkit folder", firsts[i]);
            out += "set _CVM_B" + std::to_string(i) + "=" + quote_cmd(firsts[i]) + "\r\n";
        }
        for (size_t i = 0; i < layers.size(); ++i) {
            check_cmd_quoted("the store folder", layers[i]);
            out += "set _CVM_L" + std::to_string(i) + "=" + quote_cmd(layers[i]) + "\r\n";
        }
        check_cmd_quoted("the shims folder", shims);
        out += "set _CVM_SH=" + quote_cmd(shims) + "\r\n";
        // _CVM_NEW starts with '#' so that it is never empty.
        std::string joined;
        for (const auto& d : firsts)
            joined += (joined.empty() ? "" : ";") + d;
        out += "set _CVM_NEW=#" + quote_cmd(joined) + "\r\n";
        out += "set \"_CVM_P=\"\r\n";
        // Quotes inside PATH entries are dropped: cmd's own search ignores them too.
        out += "if defined PATH set \"_CVM_P=%PATH:\"=%\"\r\n";
        out += "if defined _CVM_P for %%E in (\"%_CVM_P:;=\" \"%\") do (\r\n";
        out += "    set \"_cvm_e=%%~E\"\r\n";
        out += "    call :cvm_entry\r\n";
        out += ")\r\n";
        // Without toolkit folders the list starts "#;", and both characters go.
        out += std::string("set \"PATH=%_CVM_NEW:~") + (joined.empty() ? "2" : "1") + "%\"\r\n";
        out += "set \"_CVM_NEW=\"\r\nset \"_CVM_P=\"\r\nset \"_cvm_e=\"\r\nset \"_cvm_n=\"\r\n"
               "set \"_CVM_SH=\"\r\n";
        for (size_t i = 0; i < firsts.size(); ++i)
            out += "set \"_CVM_B" + std::to_string(i) + "=\"\r\n";
        for (size_t i = 0; i < layers.size(); ++i)
            out += "set \"_CVM_L" + std::to_string(i) + "=\"\r\n";

        // Mirrors is_foreign_cuda_dir for Windows: `goto :eof` drops the entry.
        entry += "\r\n:cvm_entry\r\n";
        entry += "if not defined _cvm_e goto :eof\r\n";
        entry += "set \"_cvm_n=%_cvm_e:/=\\%\"\r\n";
        for (int k = 0; k < 2; ++k)
            entry += "if not \"%_cvm_n:~3%\"==\"\" if \"%_cvm_n:~-1%\"==\"\\\" set "
                     "\"_cvm_n=%_cvm_n:~0,-1%\"\r\n";
        for (size_t i = 0; i < firsts.size(); ++i)
            entry += "if /i \"%_cvm_n%\"==\"%_CVM_B" + std::to_string(i) + "%\" goto :eof\r\n";
        entry += "if /i \"%_cvm_n%\"==\"%_CVM_SH%\" goto :cvm_keep\r\n";
        for (size_t i = 0; i < layers.size(); ++i) {
            std::string v = "%_CVM_L" + std::to_string(i) + "%";
            entry += "if /i \"%_cvm_n%\"==\"" + v + "\" goto :eof\r\n";
            entry += "if /i \"%_cvm_n:~0," + std::to_string(utf16_length(layers[i]) + 1) +
                     "%\"==\"" + v + "\\\" goto :eof\r\n";
        }
        entry += "if /i \"%_cvm_n:~1,9%\"==\":\\Windows\" goto :cvm_keep\r\n";
        entry += "if /i not \"%_cvm_n:\\NVIDIA GPU Computing Toolkit\\CUDA\\=%\"==\"%_cvm_n%\" "
                 "goto :eof\r\n";
        for (const char* probe : windows_cuda_bin_probes())
            entry += std::string("if exist \"%_cvm_e%\\") + probe + "\" goto :eof\r\n";
        entry += ":cvm_keep\r\n";
        entry += "set \"_CVM_NEW=%_CVM_NEW%;%_cvm_e%\"\r\n";
        entry += "goto :eof\r\n";
    }
    cmd_epilogue(out, entry);
    return out;
}

// ---------------------------------------------------------------- init

std::string posix_path_first(const std::string& shims) {
    std::string out;
    out += "_cvm_shims=" + quote_posix(shims) + "\n";
    out += R"SH(case ":${PATH-}:" in
    ":${_cvm_shims}:"*) ;;
    *)
        if [ -z "${PATH-}" ]; then
            PATH=${_cvm_shims}
        else
            _cvm_rest=${PATH}: _cvm_r=
            while [ -n "${_cvm_rest}" ]; do
                _cvm_d=${_cvm_rest%%:*}
                _cvm_rest=${_cvm_rest#*:}
                [ "${_cvm_d}" = "${_cvm_shims}" ] || _cvm_r=${_cvm_r}:${_cvm_d}
            done
            PATH=${_cvm_shims}${_cvm_r}
            unset _cvm_rest _cvm_r _cvm_d
        fi
        export PATH ;;
esac
unset _cvm_shims
)SH";
    return out;
}

std::string fish_init(const std::string& shims) {
    std::string out;
    out += "# cvm: the shims first on PATH (once).\n";
    out += "set -l _cvm_shims " + quote_fish(shims) + "\n";
    out += "while set -l _cvm_i (contains -i -- $_cvm_shims $PATH)\n";
    out += "    set -e PATH[$_cvm_i]\n";
    out += "end\n";
    out += "set -gx PATH $_cvm_shims $PATH\n";
    out += "set -e _cvm_shims _cvm_i\n";
    return out;
}

std::string pwsh_init(const std::string& shims, Os os) {
    std::string sep = os == Os::Windows ? ";" : ":";
    std::string out;
    out += "# cvm: the shims first on PATH (once).\n";
    out += "$_cvm_shims = " + quote_pwsh(shims) + "\n";
    out += "$env:PATH = (@($_cvm_shims) + @(([string]$env:PATH).Split('" + sep +
           "') | Where-Object { $_ -ne '' -and $_ -ne $_cvm_shims })) -join '" + sep + "'\n";
    out += "Remove-Variable -Name _cvm_shims\n";
    return out;
}

} // namespace

std::optional<Shell> parse_shell(std::string_view name) {
    std::string n = lower(name);
    size_t slash = n.find_last_of("/\\");
    if (slash != std::string::npos) n = n.substr(slash + 1);
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".exe") == 0) n.resize(n.size() - 4);
    if (n == "bash") return Shell::Bash;
    if (n == "zsh") return Shell::Zsh;
    if (n == "fish") return Shell::Fish;
    if (n == "pwsh" || n == "powershell") return Shell::Pwsh;
    if (n == "cmd") return Shell::Cmd;
    return std::nullopt;
}

const char* shell_name(Shell shell) {
    switch (shell) {
    case Shell::Bash:
        return "bash";
    case Shell::Zsh:
        return "zsh";
    case Shell::Fish:
        return "fish";
    case Shell::Pwsh:
        return "pwsh";
    case Shell::Cmd:
        return "cmd";
    }
    return "bash";
}

Shell detect_shell(const EnvLookup& get_env, Os os) {
    if (os == Os::Windows) {
        if (auto modules = get_env("PSModulePath")) {
            size_t entries = 0;
            for (const auto& e : split_path_list(*modules, Os::Windows))
                if (!e.empty()) ++entries;
            if (entries >= 3) return Shell::Pwsh;
        }
        return Shell::Cmd;
    }
    if (auto sh = get_env("SHELL")) {
        auto s = parse_shell(*sh);
        if (s && *s != Shell::Cmd) return *s;
    }
    return Shell::Bash;
}

bool is_variable_name(std::string_view name) {
    if (name.empty()) return false;
    for (size_t i = 0; i < name.size(); ++i) {
        char c = name[i];
        bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        bool digit = c >= '0' && c <= '9';
        if (!(alpha || (i > 0 && digit))) return false;
    }
    return true;
}

std::string shell_quote(Shell shell, std::string_view value) {
    check_value(shell, "a value", value);
    switch (shell) {
    case Shell::Bash:
    case Shell::Zsh:
        return quote_posix(value);
    case Shell::Fish:
        return quote_fish(value);
    case Shell::Pwsh:
        return quote_pwsh(value);
    case Shell::Cmd:
        return quote_cmd(value);
    }
    return quote_posix(value);
}

std::string render_env(Shell shell, const std::vector<EnvChange>& changes) {
    std::string out;
    switch (shell) {
    case Shell::Bash:
    case Shell::Zsh:
        out += kPosixDeactivate;
        posix_save_and_set(out, changes, {});
        break;
    case Shell::Fish:
        out += kFishDeactivate;
        fish_save_and_set(out, changes, {});
        break;
    case Shell::Pwsh:
        out += kPwshDeactivate;
        pwsh_save_and_set(out, changes, {});
        break;
    case Shell::Cmd: {
        std::string active;
        if (auto c = find_change(changes, "CVM_ACTIVE"); c && c->value) active = *c->value;
        cmd_prologue(out, cmd_header(active, "", false), "cvm env");
        cmd_save_and_set(out, changes, {});
        cmd_epilogue(out);
        break;
    }
    }
    return out;
}

std::string render_deactivate(Shell shell) {
    switch (shell) {
    case Shell::Bash:
    case Shell::Zsh:
        return std::string(kPosixDeactivate) + "cvm_deactivate\n";
    case Shell::Fish:
        return std::string(kFishDeactivate) + "cvm_deactivate\n";
    case Shell::Pwsh:
        return std::string(kPwshDeactivate) + "cvm_deactivate\n";
    case Shell::Cmd: {
        std::string out;
        cmd_prologue(out,
                     "rem cvm: restores what the variables held before cvm activated anything.\r\n",
                     "cvm deactivate");
        out += "call :cvm_restore\r\n";
        cmd_epilogue(out);
        return out;
    }
    }
    return {};
}

std::string render_script(Shell shell, const ActivationScript& script) {
    switch (shell) {
    case Shell::Bash:
    case Shell::Zsh:
        return posix_script(script);
    case Shell::Fish:
        return fish_script(script);
    case Shell::Pwsh:
        return pwsh_script(script);
    case Shell::Cmd:
        return cmd_script(script);
    }
    return {};
}

std::string script_file_name(Shell shell, const Version& toolkit) {
    std::string base =
        "activate_cuda" + std::to_string(toolkit.major()) + std::to_string(toolkit.minor());
    switch (shell) {
    case Shell::Cmd:
        return base + ".bat";
    case Shell::Pwsh:
        return base + ".ps1";
    case Shell::Fish:
        return base + ".fish";
    case Shell::Bash:
    case Shell::Zsh:
        return base + ".sh";
    }
    return base;
}

std::string render_init(Shell shell, const std::string& shims_dir, Os os) {
    switch (shell) {
    case Shell::Bash:
        check_value(shell, "the shims folder", shims_dir);
        return "# cvm: the shims first on PATH (once).\n" + posix_path_first(shims_dir);
    case Shell::Zsh:
        check_value(shell, "the shims folder", shims_dir);
        return "# cvm: the shims first on PATH (once).\n" + posix_path_first(shims_dir);
    case Shell::Fish:
        return fish_init(shims_dir);
    case Shell::Pwsh:
        return pwsh_init(shims_dir, os);
    case Shell::Cmd:
        throw ShellError("cmd has no startup file; add " + shims_dir +
                         " to your user PATH (System Properties > Environment Variables)");
    }
    return {};
}

} // namespace cvm
