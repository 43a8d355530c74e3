// The environment, the user's folders and the program's own name and arguments on Windows
// (platform.h), in UTF-8 over the wide API.
#include "platform/platform.h"

#include <algorithm>
#include <cwchar>
#include <stdexcept>
#include <system_error>

#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <shellapi.h> // after windows.h, which it needs

namespace cvm::platform {

std::wstring widen(const std::string& s) {
    if (s.empty()) return {};
    int n = MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0);
    std::wstring w(static_cast<size_t>(n), L'\0');
    MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), w.data(), n);
    return w;
}

std::string narrow(const std::wstring& w) {
    if (w.empty()) return {};
    int n = WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), nullptr, 0,
                                nullptr, nullptr);
    std::string s(static_cast<size_t>(n), '\0');
    WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), s.data(), n, nullptr,
                        nullptr);
    return s;
}

const char* exe_suffix() {
    return ".exe";
}

std::optional<std::string> get_env(const std::string& name) {
    std::wstring wname = widen(name);
    // A set but empty variable also gives 0, without touching the last error.
    SetLastError(ERROR_SUCCESS);
    DWORD n = GetEnvironmentVariableW(wname.c_str(), nullptr, 0);
    if (n == 0) {
        if (GetLastError() == ERROR_ENVVAR_NOT_FOUND) return std::nullopt;
        return std::string();
    }
    std::wstring buf(n, L'\0');
    DWORD got = GetEnvironmentVariableW(wname.c_str(), buf.data(), n);
    buf.resize(got);
    return narrow(buf);
}

std::map<std::string, std::string> environment() {
    std::map<std::string, std::string> out;
    wchar_t* block = GetEnvironmentStringsW();
    if (!block) return out;
    for (wchar_t* p = block; *p; p += wcslen(p) + 1) {
        std::string entry = narrow(p);
        // Entries like "=C:=C:\\" describe drive folders; keep them as they are.
        size_t eq = entry.find('=', 1);
        if (eq == std::string::npos) continue;
        out[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
    FreeEnvironmentStringsW(block);
    return out;
}

bool env_name_equal(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'a' && x <= 'z') x = static_cast<char>(x - 32);
        if (y >= 'a' && y <= 'z') y = static_cast<char>(y - 32);
        if (x != y) return false;
    }
    return true;
}

fs::path home_dir() {
    if (auto h = get_env("USERPROFILE")) return fs::u8path(*h);
    return fs::u8path(get_env("HOMEDRIVE").value_or("C:") + get_env("HOMEPATH").value_or("\\"));
}

fs::path user_data_dir() {
    if (auto v = get_env("LOCALAPPDATA"); v && !v->empty()) return fs::u8path(*v);
    return home_dir() / "AppData" / "Local";
}

fs::path user_config_dir() {
    if (auto v = get_env("APPDATA"); v && !v->empty()) return fs::u8path(*v);
    return home_dir() / "AppData" / "Roaming";
}

std::optional<fs::path> home_dir_if_any() {
    return home_dir();
}
std::optional<fs::path> user_config_dir_if_any() {
    return user_config_dir();
}

fs::path system_config_dir() {
    if (auto v = get_env("ProgramData"); v && !v->empty()) return fs::u8path(*v);
    return fs::u8path("C:\\ProgramData");
}

fs::path current_folder(std::error_code& ec) {
    return fs::current_path(ec); // long paths: Windows' own \\?\ handling
}

fs::path current_exe() {
    std::wstring buf(32768, L'\0');
    DWORD n = GetModuleFileNameW(nullptr, buf.data(), static_cast<DWORD>(buf.size()));
    buf.resize(n);
    return fs::path(buf);
}

void set_env(const std::string& name, const std::optional<std::string>& value) {
    std::wstring v = value ? widen(*value) : std::wstring();
    SetEnvironmentVariableW(widen(name).c_str(), value ? v.c_str() : nullptr);
}

std::uint64_t process_id() {
    return GetCurrentProcessId();
}

std::optional<std::string> parent_process_name() {
    return std::nullopt;
}

std::vector<std::string> utf8_args(int argc, char** argv) {
    int n = 0;
    LPWSTR* wargv = CommandLineToArgvW(GetCommandLineW(), &n);
    std::vector<std::string> out;
    if (!wargv) {
        for (int i = 0; i < argc; ++i)
            out.emplace_back(argv[i]);
        return out;
    }
    for (int i = 0; i < n; ++i)
        out.push_back(narrow(wargv[i]));
    LocalFree(wargv);
    return out;
}

std::tm utc_time(std::time_t t) {
    std::tm tm{};
    gmtime_s(&tm, &t);
    return tm;
}

} // namespace cvm::platform
