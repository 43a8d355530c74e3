#include "diagnose_support.h"

#include "windows_loader.h"

#include <utility>

namespace cvm::doctor {

namespace {

using Os = platform::Os;

bool name_equal(const std::string& a, const std::string& b, Os os) {
    return os == Os::Windows ? iequals(a, b) : a == b;
}

} // namespace

std::optional<std::string> env_get(const Env& env, const std::string& name, Os os) {
    for (const auto& [k, v] : env)
        if (name_equal(k, name, os)) return v;
    return std::nullopt;
}

std::string folded(std::string s, Os os) {
    if (os == Os::Windows) {
        for (auto& c : s) {
            if (c == '/') c = '\\';
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        }
    }
    const char sep = os == Os::Windows ? '\\' : '/';
    while (s.size() > 1 && s.back() == sep)
        s.pop_back();
    return s;
}

bool is_under(const std::string& path, const std::string& dir, Os os) {
    const std::string p = folded(path, os), d = folded(dir, os);
    if (d.empty()) return false;
    if (p == d) return true;
    const char sep = os == Os::Windows ? '\\' : '/';
    return p.size() > d.size() && p.compare(0, d.size(), d) == 0 &&
           (p[d.size()] == sep || d.back() == sep);
}

std::string shell_hint(Os os, const Env& env) {
    if (os == Os::Windows)
        return "add `cvm init pwsh | Out-String | Invoke-Expression` to $PROFILE and open a new "
               "shell (or "
               "start the program through `cvm exec --`)";
    std::string rc = "~/.bashrc", line = "eval \"$(cvm init bash)\"";
    if (auto sh = env_get(env, "SHELL", os)) {
        const std::string name = sh->substr(sh->find_last_of('/') + 1);
        if (name == "zsh") rc = "~/.zshrc", line = "eval \"$(cvm init zsh)\"";
        if (name == "fish") rc = "~/.config/fish/config.fish", line = "cvm init fish | source";
    }
    return "add `" + line + "` to " + rc +
           " and open a new shell, so that the environment follows the folder " +
           "(or start the program through `cvm exec --` or the shims)";
}

void add_finding(DoctorReport& report, Severity s, std::string code, std::string message,
                 std::string fix) {
    report.findings.push_back({s, std::move(code), std::move(message), std::move(fix)});
}

} // namespace cvm::doctor
