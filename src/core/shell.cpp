#include "core/shell.h"
#include "core/shell_detail.h"
#include "core/ascii.h"

#include <algorithm>
#include <cstdio>

namespace cvm {

using platform::Os;
using namespace shell_detail;

std::optional<Shell> parse_shell(std::string_view name) {
    std::string n = ascii_lower(name);
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
    switch (shell) {
    case Shell::Bash:
    case Shell::Zsh:
        return posix_env(changes);
    case Shell::Fish:
        return fish_env(changes);
    case Shell::Pwsh:
        return pwsh_env(changes);
    case Shell::Cmd:
        return cmd_env(changes);
    }
    return {};
}

std::string render_deactivate(Shell shell) {
    switch (shell) {
    case Shell::Bash:
    case Shell::Zsh:
        return posix_deactivate();
    case Shell::Fish:
        return fish_deactivate();
    case Shell::Pwsh:
        return pwsh_deactivate();
    case Shell::Cmd:
        return cmd_deactivate();
    }
    return {};
}

std::string render_assignments(Shell shell, const std::vector<EnvChange>& changes) {
    names_of(changes); // every name must be one a shell can set
    switch (shell) {
    case Shell::Bash:
    case Shell::Zsh:
        return posix_assign(changes);
    case Shell::Fish:
        return fish_assign(changes);
    case Shell::Pwsh:
        return pwsh_assign(changes);
    case Shell::Cmd:
        return cmd_assign(changes);
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

std::string render_init(Shell shell, const InitOptions& o) {
    switch (shell) {
    case Shell::Bash:
        check_value(shell, "the shims folder", o.shims_dir);
        return bash_init(o);
    case Shell::Zsh:
        check_value(shell, "the shims folder", o.shims_dir);
        return zsh_init(o);
    case Shell::Fish:
        return fish_init(o);
    case Shell::Pwsh:
        return pwsh_init(o);
    case Shell::Cmd:
        throw ShellError("cmd has no startup file; add " + o.shims_dir +
                         " to your user PATH (System Properties > Environment Variables)");
    }
    return {};
}

std::string render_init(Shell shell, const std::string& shims_dir, Os os) {
    InitOptions o;
    o.shims_dir = shims_dir;
    o.os = os;
    o.hook = false;
    return render_init(shell, o);
}

} // namespace cvm
