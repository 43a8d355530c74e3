// The environment, the user's folders (XDG) and the program's own name and arguments on POSIX
// (platform.h).
#include "platform/platform.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <unistd.h>

extern char** environ;

namespace cvm::platform {

const char* exe_suffix() {
    return "";
}

std::optional<std::string> get_env(const std::string& name) {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
}

std::map<std::string, std::string> environment() {
    std::map<std::string, std::string> out;
    for (char** e = environ; e && *e; ++e) {
        const char* eq = std::strchr(*e, '=');
        if (!eq) continue;
        out.emplace(std::string(*e, static_cast<size_t>(eq - *e)), std::string(eq + 1));
    }
    return out;
}

bool env_name_equal(const std::string& a, const std::string& b) {
    return a == b;
}

std::optional<fs::path> home_dir_if_any() {
    if (auto h = get_env("HOME"); h && !h->empty() && h->front() == '/') return fs::path(*h);
    return std::nullopt;
}

fs::path home_dir() {
    if (auto h = home_dir_if_any()) return *h;
    auto h = get_env("HOME");
    if (h && !h->empty())
        throw HomeError("HOME is the relative path '" + *h +
                        "', so cvm cannot find your home folder; "
                        "set HOME to its whole path, or set CVM_ROOT (and XDG_CONFIG_HOME)");
    throw HomeError(
        "HOME is not set, so cvm cannot find your home folder; set HOME, or set CVM_ROOT "
        "(and XDG_CONFIG_HOME)");
}

// $NAME when set to a whole path; nullopt when unset or empty; HomeError when relative (it would
// name a folder of wherever cvm runs, so a cloned project could hold the store or the config).
static std::optional<fs::path> absolute_variable(const char* name, const char* instead) {
    auto x = get_env(name);
    if (!x || x->empty()) return std::nullopt;
    if (x->front() != '/')
        throw HomeError(std::string(name) + " is the relative path '" + *x +
                        "'; set it to a whole path or unset it" + instead);
    return fs::path(*x);
}

std::optional<fs::path> user_config_dir_if_any() {
    if (auto x = absolute_variable("XDG_CONFIG_HOME", " (or set CVM_CONFIG)")) return *x;
    if (auto h = home_dir_if_any()) return *h / ".config";
    return std::nullopt;
}

fs::path user_data_dir() {
    if (auto x = absolute_variable("XDG_DATA_HOME", " (or set CVM_ROOT)")) return *x;
    return home_dir() / ".local" / "share";
}

fs::path user_config_dir() {
    if (auto x = absolute_variable("XDG_CONFIG_HOME", " (or set CVM_CONFIG)")) return *x;
    return home_dir() / ".config";
}

fs::path system_config_dir() {
    return fs::path("/etc");
}

fs::path current_exe() {
    std::error_code ec;
    fs::path p = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path() : p;
}

void set_env(const std::string& name, const std::optional<std::string>& value) {
    if (value)
        setenv(name.c_str(), value->c_str(), 1);
    else
        unsetenv(name.c_str());
}

std::uint64_t process_id() {
    return static_cast<std::uint64_t>(getpid());
}

std::optional<std::string> parent_process_name() {
    auto text = read_file("/proc/" + std::to_string(getppid()) + "/comm", 256);
    if (!text) return std::nullopt;
    while (!text->empty() && (text->back() == '\n' || text->back() == '\r'))
        text->pop_back();
    if (text->empty()) return std::nullopt;
    return text;
}

std::vector<std::string> utf8_args(int argc, char** argv) {
    return std::vector<std::string>(argv, argv + argc);
}

std::tm utc_time(std::time_t t) {
    std::tm tm{};
    gmtime_r(&t, &tm);
    return tm;
}

} // namespace cvm::platform
