// bash and zsh: the code both run (activation, deactivation, scripts, PATH set-up).
#include <algorithm>
#include <string>

#include "shells/shell_common.h"
#include "shells/shell_posix.h"

namespace cvm::shell_detail {

using platform::Os;

namespace {

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

} // namespace

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
    for (const auto* list : {&s.bin_dirs, &s.lib_dirs, &s.include_dirs})
        for (const auto& d : *list)
            firsts.push_back(normalized_dir(d, os));
    std::vector<std::string> layers;
    for (const auto& l : s.store_layers)
        layers.push_back(normalized_dir(l, os));
    for (const auto& d : firsts)
        check_value(Shell::Bash, "a toolkit folder", d);
    out += R"SH(_cvm_keep() {
    # $1: an entry of a list variable, $2: what its folders hold (0 programs, 1 libraries,
    # 2 headers). Fails for another CUDA toolkit's or cuDNN build's folder.
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
    out += R"SH(        /usr/lib/*-linux-gnu*|/lib/*-linux-gnu*|/usr/include/*-linux-gnu*)
            case ${_cvm_e#*-linux-gnu} in */*) ;; *) return 0 ;; esac ;;
    esac
    case ${2} in
    1)
        for _cvm_l in)SH";
    for (const char* lib : linux_cuda_library_probes())
        out += std::string(" ") + lib;
    out += R"SH(; do
            if [ -e "${1}/${_cvm_l}" ]; then return 1; fi
        done
        case ${_cvm_e} in */stubs) if [ -e "${1}/libcuda.so" ]; then return 1; fi ;; esac
        case ${_cvm_e} in */cuda-[0-9]*/lib64|*/cuda/lib64|*/cuda-[0-9]*/targets/*/lib|*/cuda/targets/*/lib) return 1 ;; esac ;;
    2)
        for _cvm_l in)SH";
    for (const char* h : cuda_header_probes())
        out += std::string(" ") + h;
    out += R"SH(; do
            if [ -e "${1}/${_cvm_l}" ]; then return 1; fi
        done
        case ${_cvm_e} in */cuda-[0-9]*/include|*/cuda/include|*/cuda-[0-9]*/targets/*/include|*/cuda/targets/*/include) return 1 ;; esac ;;
    *)
        if [ -e "${1}/nvcc" ]; then return 1; fi
        case ${_cvm_e} in */cuda-[0-9]*/bin|*/cuda/bin) return 1 ;; esac ;;
    esac
    return 0
}
_cvm_filter() {
    # $1: a colon-separated list, $2: as _cvm_keep's; appends what stays to _cvm_r.
    _cvm_rest=${1}:
    while [ -n "${_cvm_rest}" ]; do
        _cvm_d=${_cvm_rest%%:*}
        _cvm_rest=${_cvm_rest#*:}
        if _cvm_keep "${_cvm_d}" "${2}"; then _cvm_r=${_cvm_r:+${_cvm_r}:}${_cvm_d}; fi
    done
}
)SH";
    auto lists = script_lists(s.changes);
    std::vector<std::string> skip;
    for (const auto& l : lists)
        skip.push_back(l.first);
    posix_save_and_set(out, s.changes, skip);
    for (const auto& [var, kind] : lists) {
        std::string joined = join(script_firsts(s, var), ":");
        check_value(Shell::Bash, var, joined);
        out += "_cvm_r=" + quote_posix(joined) + "\n";
        out += "if [ -n \"${" + var + "+x}\" ]; then _cvm_filter \"${" + var + "}\" " +
               std::to_string(kind) + "; fi\n";
        // An empty CPATH element would mean the current folder to gcc.
        out += "if [ -n \"${_cvm_r}\" ]; then export " + var + "=\"${_cvm_r}\"; else unset " + var +
               "; fi\n";
    }
    out += "unset -f _cvm_keep _cvm_filter\n";
    out += "unset _cvm_r _cvm_rest _cvm_d _cvm_e _cvm_l\n";
    return out;
}

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
std::string posix_env(const std::vector<EnvChange>& changes) {
    std::string out = kPosixDeactivate;
    posix_save_and_set(out, changes, {});
    return out;
}

std::string posix_deactivate() {
    return std::string(kPosixDeactivate) + "cvm_deactivate\n";
}

std::string posix_assign(const std::vector<EnvChange>& changes) {
    std::string out;
    for (const auto& c : changes) {
        if (c.value) {
            check_value(Shell::Bash, c.name, *c.value);
            out += "export " + c.name + "=" + quote_posix(*c.value) + "\n";
        } else {
            out += "unset " + c.name + "\n";
        }
    }
    return out;
}

std::string posix_hook_functions(const InitOptions& o, const char* shell) {
    for (const auto& f : o.watched)
        check_value(Shell::Bash, "a store folder", f);
    check_value(Shell::Bash, "the global version file", o.global_file);
    check_value(Shell::Bash, "the stamp folder", o.stamp_dir);
    std::string out;
    out += "_cvm_stamp=" + quote_posix(o.stamp_dir) + "/$$\n";
    // Unchanged when the nearest version file (else the global one) and the store's folders are
    // older than the stamp `cvm hook-env` left: a missing one counts as older.
    std::string fresh =
        "[[ -e ${_cvm_stamp} ]] && [[ ! -e ${_cvm_f} || ${_cvm_f} -ot ${_cvm_stamp} ]]";
    for (const auto& f : o.watched)
        fresh +=
            " && [[ ! -e " + quote_posix(f) + " || " + quote_posix(f) + " -ot ${_cvm_stamp} ]]";
    out += R"SH(_cvm_hook() {
    # The prompt hook (cvm init): applies the selection of this folder when it changed. Cheap
    # when nothing did: a test per folder up to the nearest .cudaversion, and a few more.
    local _cvm_status=$? _cvm_d=${PWD-} _cvm_f= _cvm_k _cvm_code
    # Off after `cvm deactivate`, until `cvm shell` (or `cvm init` again).
    [[ -z ${_cvm_off-} ]] || return ${_cvm_status}
    while :; do
        if [[ -e ${_cvm_d}/.cudaversion ]]; then _cvm_f=${_cvm_d}/.cudaversion; break; fi
        [[ -n ${_cvm_d} ]] || break
        _cvm_d=${_cvm_d%/*}
    done
    _cvm_k="${PWD-}|${CVM_VERSION-}|${_CVM_SAVED+m}|${_cvm_f}"
    [[ -n ${_cvm_f} ]] || _cvm_f=)SH" +
           quote_posix(o.global_file) + R"SH(
    if [[ ${_cvm_k} == "${_cvm_key-}" ]] && )SH" +
           fresh + R"SH(; then
        return ${_cvm_status}
    fi
    _cvm_key=${_cvm_k}
    _cvm_code=$(command cvm hook-env --shell )SH" +
           shell + R"SH( --pid $$) && eval "${_cvm_code}"
    return ${_cvm_status}
}
)SH";
    return out;
}

// `cvm shell` and `cvm deactivate` print code for the shell to run; the function runs it.
// With the hook, the function tells cvm whether the hook is on (--prompt-hook), so that cvm can
// say what the function then does to it.
std::string posix_cvm_function(const char* shell, bool hook) {
    std::string out = R"SH(cvm() {
    case ${1-} in
    shell|deactivate)
        local _cvm_a _cvm_code)SH";
    if (hook) out += R"SH( _cvm_h=on
        [ -z "${_cvm_off-}" ] || _cvm_h=off)SH";
    out += R"SH(
        for _cvm_a in "$@"; do
            case ${_cvm_a} in -h|--help|--help-all) command cvm "$@"; return ;; esac
        done
        _cvm_code=$(command cvm "$@" --shell )SH";
    out += shell;
    if (hook) out += R"SH( --prompt-hook "${_cvm_h}")SH";
    out += R"SH() || return
        eval "${_cvm_code}")SH";
    if (hook)
        out += R"SH(
        if [ "$1" = deactivate ]; then _cvm_off=1; else unset _cvm_off; _cvm_key=; _cvm_hook; fi)SH";
    out += R"SH(
        return 0 ;;
    *) command cvm "$@" ;;
    esac
}
)SH";
    return out;
}

} // namespace cvm::shell_detail
