// Windows implementation of os.h: LoadLibrary, GetProcAddress, EnumProcessModules.
#include "os.h"

#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <psapi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace cvm::probe::os {
namespace {

std::string to_utf8(const std::wstring& wide) {
    if (wide.empty()) return {};
    int size = WideCharToMultiByte(CP_UTF8, 0, wide.data(), static_cast<int>(wide.size()), nullptr,
                                   0, nullptr, nullptr);
    std::string out(static_cast<std::size_t>(size), '\0');
    WideCharToMultiByte(CP_UTF8, 0, wide.data(), static_cast<int>(wide.size()), out.data(), size,
                        nullptr, nullptr);
    return out;
}

std::wstring to_wide(const std::string& text) {
    if (text.empty()) return {};
    int size =
        MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), nullptr, 0);
    std::wstring out(static_cast<std::size_t>(size), L'\0');
    MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), out.data(), size);
    return out;
}

std::string module_file_name(HMODULE module) {
    std::wstring buffer(32768, L'\0');
    DWORD length = GetModuleFileNameW(module, buffer.data(), static_cast<DWORD>(buffer.size()));
    buffer.resize(length);
    return to_utf8(buffer);
}

std::string resolve_real_path(const std::string& path) {
    std::error_code ec;
    auto real = std::filesystem::weakly_canonical(std::filesystem::u8path(path), ec);
    return ec ? path : real.u8string();
}

std::string lower_base_name(const std::string& path) {
    auto slash = path.find_last_of("/\\");
    std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return name;
}

std::string last_error_text() {
    DWORD code = GetLastError();
    char* text = nullptr;
    FormatMessageA(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM |
                       FORMAT_MESSAGE_IGNORE_INSERTS,
                   nullptr, code, 0, reinterpret_cast<LPSTR>(&text), 0, nullptr);
    std::string message = text ? text : "LoadLibrary failed";
    if (text) LocalFree(text);
    while (!message.empty() && (message.back() == '\n' || message.back() == '\r'))
        message.pop_back();
    return message + " (error " + std::to_string(code) + ")";
}

} // namespace

LibraryHandle open_library(const std::string& name, std::string& error) {
    // The standard search order, as a program that names the DLL would get.
    HMODULE module = LoadLibraryW(to_wide(name).c_str());
    if (!module) error = last_error_text();
    return reinterpret_cast<LibraryHandle>(module);
}

void* find_symbol(LibraryHandle library, const char* symbol) {
    if (!library) return nullptr;
    return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(library), symbol));
}

std::string library_path(LibraryHandle library, const char*) {
    if (!library) return {};
    return resolve_real_path(module_file_name(static_cast<HMODULE>(library)));
}

void* module_own_symbol(const std::string&, const char*) {
    // The sub-library check runs on Linux only: cuDNN's DLLs carry a version resource, which
    // `cvm doctor` reads.
    return nullptr;
}

std::vector<LoadedModule> loaded_modules() {
    std::vector<LoadedModule> modules;
    std::vector<HMODULE> handles(1024);
    DWORD needed = 0;
    HANDLE process = GetCurrentProcess();
    if (!EnumProcessModules(process, handles.data(),
                            static_cast<DWORD>(handles.size() * sizeof(HMODULE)), &needed))
        return modules;
    if (needed > handles.size() * sizeof(HMODULE)) {
        handles.resize(needed / sizeof(HMODULE));
        if (!EnumProcessModules(process, handles.data(),
                                static_cast<DWORD>(handles.size() * sizeof(HMODULE)), &needed))
            return modules;
    }
    handles.resize(needed / sizeof(HMODULE));
    for (HMODULE module : handles) {
        std::string path = module_file_name(module);
        if (!path.empty()) modules.push_back({path, resolve_real_path(path)});
    }
    return modules;
}

std::vector<SearchFolder> library_search_folders() {
    std::vector<SearchFolder> folders;
    auto add = [&folders](const std::string& path, const std::string& origin) {
        if (path.empty()) return;
        for (const auto& f : folders)
            if (f.path == path) return;
        folders.push_back({path, origin});
    };
    std::string exe = module_file_name(nullptr);
    auto slash = exe.find_last_of("/\\");
    if (slash != std::string::npos) add(exe.substr(0, slash), "application folder");
    std::wstring buffer(MAX_PATH * 4, L'\0');
    UINT n = GetSystemDirectoryW(buffer.data(), static_cast<UINT>(buffer.size()));
    add(to_utf8(buffer.substr(0, n)), "system folder");
    n = GetWindowsDirectoryW(buffer.data(), static_cast<UINT>(buffer.size()));
    std::string windows = to_utf8(buffer.substr(0, n));
    add(windows + "\\System", "16-bit system folder");
    add(windows, "Windows folder");
    std::error_code ec;
    add(std::filesystem::current_path(ec).u8string(), "current folder");
    if (const char* path = std::getenv("PATH")) {
        std::string all = path;
        std::size_t start = 0;
        while (start <= all.size()) {
            std::size_t end = all.find(';', start);
            if (end == std::string::npos) end = all.size();
            add(all.substr(start, end - start), "PATH");
            start = end + 1;
        }
    }
    return folders;
}

std::vector<std::string> loader_cache_entries(const std::string&) {
    return {};
}

std::vector<std::string> cudart_names(int major) {
    switch (major) {
    case 11:
        return {"cudart64_110.dll"};
    case 10:
        return {"cudart64_102.dll", "cudart64_101.dll", "cudart64_100.dll"};
    default:
        if (major > 0) return {"cudart64_" + std::to_string(major) + ".dll"};
        return {"cudart64_13.dll",  "cudart64_12.dll",  "cudart64_110.dll",
                "cudart64_102.dll", "cudart64_101.dll", "cudart64_100.dll"};
    }
}

std::vector<std::string> cudnn_names(int major) {
    if (major > 0) return {"cudnn64_" + std::to_string(major) + ".dll"};
    return {"cudnn64_9.dll", "cudnn64_8.dll", "cudnn64_7.dll"};
}

std::vector<std::string> nccl_names() {
    return {};
}

bool is_nccl_module_name(const std::string& file_name) {
    return lower_base_name(file_name).rfind("nccl", 0) == 0;
}

bool set_env_if_unset(const char* name, const std::string& value) {
    if (GetEnvironmentVariableA(name, nullptr, 0) > 0) return false;
    return SetEnvironmentVariableA(name, value.c_str()) != 0;
}

std::vector<std::string> environment_with_prefix(const std::string& prefix) {
    std::vector<std::string> out;
    LPCH block = GetEnvironmentStringsA();
    if (!block) return out;
    for (const char* e = block; *e; e += std::strlen(e) + 1)
        if (std::string(e).rfind(prefix, 0) == 0) out.emplace_back(e);
    FreeEnvironmentStringsA(block);
    std::sort(out.begin(), out.end());
    return out;
}

std::string make_temporary_file(const std::string& prefix) {
    char dir[MAX_PATH + 1];
    char name[MAX_PATH + 1];
    if (!GetTempPathA(sizeof dir, dir) || !GetTempFileNameA(dir, prefix.c_str(), 0, name))
        return {};
    return name;
}

bool is_cuda_module_name(const std::string& file_name) {
    std::string name = lower_base_name(file_name);
    return name.rfind("cu", 0) == 0 || name.rfind("nv", 0) == 0;
}

bool is_cudnn_module_name(const std::string& file_name) {
    return lower_base_name(file_name).rfind("cudnn", 0) == 0;
}

bool is_cudart_module_name(const std::string& file_name) {
    return lower_base_name(file_name).rfind("cudart", 0) == 0;
}

bool same_folder(const std::string& a, const std::string& b) {
    auto lower = [](std::string text) {
        std::transform(text.begin(), text.end(), text.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        while (text.size() > 3 && (text.back() == '\\' || text.back() == '/'))
            text.pop_back();
        return text;
    };
    return lower(resolve_real_path(a)) == lower(resolve_real_path(b));
}

} // namespace cvm::probe::os
