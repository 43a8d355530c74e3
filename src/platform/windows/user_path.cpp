// The user's PATH in the registry (user_path.h): HKCU\\Environment's Path, read unexpanded, written
// back with its type and announced with WM_SETTINGCHANGE.
#include "platform/user_path.h"

#include <stdexcept>

#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include "platform/platform.h"

namespace cvm::platform {

namespace {

std::string system_reason(LONG code) {
    wchar_t* text = nullptr;
    FormatMessageW(
        FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
        nullptr, static_cast<DWORD>(code), 0, reinterpret_cast<wchar_t*>(&text), 0, nullptr);
    std::string reason = text ? narrow(text) : "error " + std::to_string(code);
    if (text) LocalFree(text);
    while (!reason.empty() &&
           (reason.back() == '\n' || reason.back() == '\r' || reason.back() == '.'))
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
        rc = RegQueryValueExW(key, L"Path", nullptr, &type, reinterpret_cast<BYTE*>(value.data()),
                              &size);
        value.resize(size / sizeof(wchar_t));
        while (!value.empty() && value.back() == L'\0')
            value.pop_back();
    } else if (rc == ERROR_FILE_NOT_FOUND) {
        type = REG_EXPAND_SZ;
        rc = ERROR_SUCCESS;
    } else if (rc == ERROR_SUCCESS) {
        RegCloseKey(key);
        throw std::runtime_error("HKCU\\Environment\\Path is not text; fix it in the Environment "
                                 "Variables dialog first");
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
        SendMessageTimeoutW(HWND_BROADCAST, WM_SETTINGCHANGE, 0,
                            reinterpret_cast<LPARAM>(L"Environment"), SMTO_ABORTIFHUNG, 5000,
                            &ignored);
    }
    RegCloseKey(key);
    return added;
}

} // namespace cvm::platform
