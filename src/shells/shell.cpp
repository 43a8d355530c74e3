// The shells' public entry points (shells/shell.h): names, detection, and each renderer looked up
// once in the shell's table (shells/shell_syntax.h).
#include "shells/shell.h"
#include "text/ascii.h"
#include "shells/shell_common.h"
#include "shells/shell_syntax.h"
#include "text/path_list.h"

#include <algorithm>
#include <cstdio>

namespace cvm {

using platform::Os;
using namespace shell_detail;

namespace {

const ShellSyntax* const kShells[] = {&kBashSyntax, &kZshSyntax, &kFishSyntax, &kPwshSyntax,
                                      &kCmdSyntax};

const ShellSyntax& syntax_of(Shell shell) {
    for (const ShellSyntax* s : kShells)
        if (s->shell == shell) return *s;
    return kBashSyntax;
}

} // namespace

std::optional<Shell> parse_shell(std::string_view name) {
    std::string n = ascii_lower(name);
    size_t slash = n.find_last_of("/\\");
    if (slash != std::string::npos) n = n.substr(slash + 1);
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".exe") == 0) n.resize(n.size() - 4);
    for (const ShellSyntax* s : kShells)
        if (n == s->name || (s->alias && n == s->alias)) return s->shell;
    return std::nullopt;
}

const char* shell_name(Shell shell) {
    return syntax_of(shell).name;
}

Shell detect_shell(const EnvLookup& get_env, Os os, const std::optional<std::string>& parent) {
    if (os == Os::Windows) {
        if (auto modules = get_env("PSModulePath")) {
            size_t entries = 0;
            for (const auto& e : split_path_list(*modules, Os::Windows))
                if (!e.empty()) ++entries;
            if (entries >= 3) return Shell::Pwsh;
        }
        return Shell::Cmd;
    }
    if (parent) {
        // A login shell's name starts with '-'.
        auto s = parse_shell(!parent->empty() && (*parent)[0] == '-' ? parent->substr(1) : *parent);
        if (s && *s != Shell::Cmd) return *s;
    }
    if (auto sh = get_env("SHELL")) {
        auto s = parse_shell(*sh);
        if (s && *s != Shell::Cmd) return *s;
    }
    return Shell::Bash;
}

std::string shell_quote(Shell shell, std::string_view value) {
    check_value(shell, "a value", value);
    return syntax_of(shell).quote(value);
}

std::string render_env(Shell shell, const std::vector<EnvChange>& changes) {
    return syntax_of(shell).env(changes);
}

std::string render_deactivate(Shell shell) {
    return syntax_of(shell).deactivate();
}

std::string render_assignments(Shell shell, const std::vector<EnvChange>& changes) {
    names_of(changes); // every name must be one a shell can set
    return syntax_of(shell).assign(changes);
}

std::string render_script(Shell shell, const ActivationScript& script) {
    return syntax_of(shell).script(script);
}

std::string script_file_name(Shell shell, const Version& toolkit) {
    std::string base =
        "activate_cuda" + std::to_string(toolkit.major()) + std::to_string(toolkit.minor());
    return base + syntax_of(shell).script_suffix;
}

std::string render_init(Shell shell, const InitOptions& o) {
    return syntax_of(shell).init(o);
}

std::string render_init(Shell shell, const std::string& shims_dir, Os os) {
    InitOptions o;
    o.shims_dir = shims_dir;
    o.os = os;
    o.hook = false;
    return render_init(shell, o);
}

} // namespace cvm
