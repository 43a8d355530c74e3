#include "platform/user_path.h"

#include <stdexcept>

#include "platform/platform.h"

#ifdef _WIN32
#include <windows.h>
#endif

namespace cvm::platform {

namespace {

std::string folder_key(std::string dir) {
    while (dir.size() > 1 && (dir.back() == '\\' || dir.back() == '/')) dir.pop_back();
    for (auto& c : dir) {
        if (c == '/') c = '\\';
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    }
    return dir;
}

} // namespace

std::optional<std::string> user_path_with(const std::string& current, const std::vector<std::string>& dirs) {
    std::vector<std::string> have;
    size_t start = 0;
    while (start <= current.size()) {
        size_t end = current.find(';', start);
        if (end == std::string::npos) end = current.size();
        if (end > start) have.push_back(folder_key(current.substr(start, end - start)));
        start = end + 1;
    }
    std::string out = current;
    bool changed = false;
    for (const auto& d : dirs) {
        if (d.empty()) continue;
        std::string key = folder_key(d);
        bool present = false;
        for (const auto& h : have) present = present || h == key;
        if (present) continue;
        have.push_back(key);
        if (!out.empty() && out.back() != ';') out.push_back(';');
        out += d;
        changed = true;
    }
    if (!changed) return std::nullopt;
    return out;
}

#ifdef _WIN32

namespace {

std::string system_reason(LONG code) {
    wchar_t* text = nullptr;
    FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
                   nullptr, static_cast<DWORD>(code), 0, reinterpret_cast<wchar_t*>(&text), 0, nullptr);
    std::string reason = text ? narrow(text) : "error " + std::to_string(code);
    if (text) LocalFree(text);
    while (!reason.empty() && (reason.back() == '\n' || reason.back() == '\r' || reason.back() == '.'))
        reason.pop_back();
    return reason;
}

} // namespace

std::vector<std::string> add_to_user_path(const std::vector<std::string>& dirs) {
    HKEY key = nullptr;
    LONG rc = RegCreateKeyExW(HKEY_CURRENT_USER, L"Environment", 0, nullptr, 0,
                              KEY_QUERY_VALUE | KEY_SET_VALUE, nullptr, &key, nullptr);
    if (rc != ERROR_SUCCESS)
        throw std::runtime_error("cannot open HKCU\\Environment: " + system_reason(rc));
    DWORD type = REG_EXPAND_SZ, size = 0;
    std::wstring value;
    rc = RegQueryValueExW(key, L"Path", nullptr, &type, nullptr, &size);
    if (rc == ERROR_SUCCESS && (type == REG_SZ || type == REG_EXPAND_SZ)) {
        value.resize(size / sizeof(wchar_t) + 1);
        size = static_cast<DWORD>(value.size() * sizeof(wchar_t));
        rc = RegQueryValueExW(key, L"Path", nullptr, &type, reinterpret_cast<BYTE*>(value.data()), &size);
        value.resize(size / sizeof(wchar_t));
        while (!value.empty() && value.back() == L'\0') value.pop_back();
    } else if (rc == ERROR_FILE_NOT_FOUND) {
        type = REG_EXPAND_SZ;
        rc = ERROR_SUCCESS;
    } else if (rc == ERROR_SUCCESS) {
        RegCloseKey(key);
        throw std::runtime_error("HKCU\\Environment\\Path is not text; fix it in the Environment Variables dialog first");
    }
    if (rc != ERROR_SUCCESS) {
        RegCloseKey(key);
        throw std::runtime_error("cannot read HKCU\\Environment\\Path: " + system_reason(rc));
    }
    std::string current = narrow(value);
    auto merged = user_path_with(current, dirs);
    std::vector<std::string> added;
    if (merged) {
        for (const auto& d : dirs)
            if (user_path_with(current, {d})) added.push_back(d);
        std::wstring w = widen(*merged);
        rc = RegSetValueExW(key, L"Path", 0, type, reinterpret_cast<const BYTE*>(w.c_str()),
                            static_cast<DWORD>((w.size() + 1) * sizeof(wchar_t)));
        if (rc != ERROR_SUCCESS) {
            RegCloseKey(key);
            throw std::runtime_error("cannot write HKCU\\Environment\\Path: " + system_reason(rc));
        }
        DWORD_PTR ignored = 0;
        SendMessageTimeoutW(HWND_BROADCAST, WM_SETTINGCHANGE, 0, reinterpret_cast<LPARAM>(L"Environment"),
                            SMTO_ABORTIFHUNG, 5000, &ignored);
    }
    RegCloseKey(key);
    return added;
}

#else

std::vector<std::string> add_to_user_path(const std::vector<std::string>&) {
    throw std::runtime_error("the user's PATH in the registry exists only on Windows; on Linux put "
                             "`eval \"$(cvm init bash)\"` in your shell's rc file");
}

#endif

} // namespace cvm::platform
