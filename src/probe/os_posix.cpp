// POSIX (glibc) implementation of os.h: dlopen, dlinfo, dl_iterate_phdr.
#include "os.h"

#include "binary/ld_cache.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

extern char** environ;

namespace cvm::probe::os {
namespace {

std::string resolve_real_path(const std::string& path) {
    std::error_code ec;
    auto real = std::filesystem::canonical(path, ec);
    return ec ? path : real.string();
}

std::string base_name(const std::string& path) {
    auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool starts_with(const std::string& text, const char* prefix) {
    return text.rfind(prefix, 0) == 0;
}

} // namespace

LibraryHandle open_library(const std::string& name, std::string& error) {
    dlerror();
    // RTLD_NOW: an unresolvable dependency is reported here, by name, instead of crashing later.
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* message = dlerror();
        error = message ? message : "dlopen failed";
    }
    return handle;
}

void* find_symbol(LibraryHandle library, const char* symbol) {
    if (!library) return nullptr;
    return dlsym(library, symbol);
}

std::string library_path(LibraryHandle library, const char* any_symbol) {
    if (!library) return {};
    struct link_map* map = nullptr;
    if (dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
        return resolve_real_path(map->l_name);
    if (void* address = any_symbol ? dlsym(library, any_symbol) : nullptr) {
        Dl_info info{};
        if (dladdr(address, &info) && info.dli_fname) return resolve_real_path(info.dli_fname);
    }
    return {};
}

void* module_own_symbol(const std::string& real_path, const char* symbol) {
    void* handle = dlopen(real_path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!handle) return nullptr;
    void* address = dlsym(handle, symbol);
    Dl_info info{};
    bool own = address && dladdr(address, &info) && info.dli_fname &&
               resolve_real_path(info.dli_fname) == real_path;
    dlclose(handle);
    return own ? address : nullptr;
}

std::vector<LoadedModule> loaded_modules() {
    std::vector<LoadedModule> modules;
    dl_iterate_phdr(
        [](struct dl_phdr_info* info, size_t, void* data) {
            auto* out = static_cast<std::vector<LoadedModule>*>(data);
            if (info->dlpi_name && *info->dlpi_name)
                out->push_back({info->dlpi_name, resolve_real_path(info->dlpi_name)});
            return 0;
        },
        &modules);
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
    if (const char* lib_path = std::getenv("LD_LIBRARY_PATH")) {
        std::string all = lib_path;
        std::size_t start = 0;
        while (start <= all.size()) {
            std::size_t end = all.find_first_of(":;", start);
            if (end == std::string::npos) end = all.size();
            std::string dir = all.substr(start, end - start);
            std::error_code ec;
            if (!dir.empty())
                add(dir, std::filesystem::is_directory(dir, ec) ? "LD_LIBRARY_PATH"
                                                                : "LD_LIBRARY_PATH, missing");
            start = end + 1;
        }
    }
    std::vector<SearchFolder> defaults;
#ifdef RTLD_DI_SERINFO
    // glibc tells the exact list for a dlopen from the main program.
    if (void* self = dlopen(nullptr, RTLD_NOW)) {
        Dl_serinfo size_info{};
        if (dlinfo(self, RTLD_DI_SERINFOSIZE, &size_info) == 0 && size_info.dls_size > 0) {
            std::vector<unsigned char> buffer(size_info.dls_size);
            auto* info = reinterpret_cast<Dl_serinfo*>(buffer.data());
            info->dls_size = size_info.dls_size;
            info->dls_cnt = size_info.dls_cnt;
            if (dlinfo(self, RTLD_DI_SERINFOSIZE, info) == 0 &&
                dlinfo(self, RTLD_DI_SERINFO, info) == 0) {
                for (unsigned i = 0; i < info->dls_cnt; ++i) {
                    const Dl_serpath& p = info->dls_serpath[i];
                    if (!p.dls_name) continue;
                    if (p.dls_flags & LA_SER_LIBPATH)
                        add(p.dls_name, "LD_LIBRARY_PATH");
                    else if (p.dls_flags & LA_SER_RUNPATH)
                        add(p.dls_name, "RUNPATH/RPATH of cvm-probe");
                    else
                        defaults.push_back({p.dls_name, "system default"});
                }
            }
        }
        dlclose(self);
    }
#endif
    if (defaults.empty())
        for (const char* dir : {"/lib", "/usr/lib", "/lib64", "/usr/lib64"})
            defaults.push_back({dir, "system default"});
    add("/etc/ld.so.cache", "loader cache");
    for (const auto& d : defaults)
        add(d.path, d.origin);
    return folders;
}

std::vector<std::string> loader_cache_entries(const std::string& prefix) {
    auto cache = binary::read_ld_cache_file("/etc/ld.so.cache");
    if (!cache) return {};
    std::vector<std::string> lines;
    for (const auto& entry : cache.cache->entries) {
        if (!starts_with(entry.name, prefix.c_str())) continue;
        std::string line = entry.name + " => " + entry.path;
        if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(line);
    }
    return lines;
}

std::vector<std::string> cudart_names(int major) {
    switch (major) {
    case 11:
        return {"libcudart.so.11.0"};
    case 10:
        return {"libcudart.so.10.2", "libcudart.so.10.1", "libcudart.so.10.0"};
    default:
        if (major > 0) return {"libcudart.so." + std::to_string(major)};
        return {"libcudart.so.13",   "libcudart.so.12",   "libcudart.so.11.0", "libcudart.so.10.2",
                "libcudart.so.10.1", "libcudart.so.10.0", "libcudart.so"};
    }
}

std::vector<std::string> cudnn_names(int major) {
    if (major > 0) return {"libcudnn.so." + std::to_string(major)};
    return {"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so.7"};
}

bool is_cuda_module_name(const std::string& file_name) {
    std::string name = base_name(file_name);
    if (starts_with(name, "libcurl")) return false;
    return starts_with(name, "libcu") || starts_with(name, "libnv") ||
           starts_with(name, "libnccl.so");
}

std::vector<std::string> nccl_names() {
    return {"libnccl.so.2"};
}

bool is_nccl_module_name(const std::string& file_name) {
    return starts_with(base_name(file_name), "libnccl.so");
}

bool set_env_if_unset(const char* name, const std::string& value) {
    if (std::getenv(name)) return false;
    return setenv(name, value.c_str(), 0) == 0;
}

std::vector<std::string> environment_with_prefix(const std::string& prefix) {
    std::vector<std::string> out;
    for (char** e = environ; e && *e; ++e)
        if (starts_with(*e, prefix.c_str())) out.emplace_back(*e);
    std::sort(out.begin(), out.end());
    return out;
}

std::string make_temporary_file(const std::string& prefix) {
    const char* dir = std::getenv("TMPDIR");
    std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/" + prefix + "XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    int fd = mkstemp(name.data());
    if (fd < 0) return {};
    close(fd);
    return name.data();
}

bool is_cudnn_module_name(const std::string& file_name) {
    return starts_with(base_name(file_name), "libcudnn");
}

bool is_cudart_module_name(const std::string& file_name) {
    return starts_with(base_name(file_name), "libcudart");
}

bool same_folder(const std::string& a, const std::string& b) {
    return resolve_real_path(a) == resolve_real_path(b);
}

} // namespace cvm::probe::os
