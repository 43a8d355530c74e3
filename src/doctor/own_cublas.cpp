#include "own_cublas.h"

#include "binary/elf_reader.h"

#include <algorithm>

namespace cvm::doctor {

namespace {

// "libcublas.so.13" in `dir` gives "13"; empty when `dir` holds no such file.
std::string cublas_major_in(const FileSystemView& fs, const std::string& dir) {
    std::vector<std::string> names = fs.list(dir);
    std::sort(names.begin(), names.end());
    for (const auto& n : names) {
        if (n.rfind("libcublas.so.", 0) != 0) continue;
        const std::string major = n.substr(13);
        if (!major.empty() && std::all_of(major.begin(), major.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
            fs.is_file(path_join(dir, n)))
            return major;
    }
    return {};
}

std::optional<binary::ElfInfo> elf_of(const FileSystemView& fs, const std::string& path) {
    auto src = fs.open(path);
    if (!src) return std::nullopt;
    auto elf = binary::read_elf(*src);
    return elf.info;
}

// Whether the library at `path` looks in its own folder first for what it needs by name: DT_RPATH
// $ORIGIN and no DT_RUNPATH (which would make ld.so ignore DT_RPATH and look after LD_LIBRARY_PATH).
bool own_folder_first(const FileSystemView& fs, const std::string& path) {
    auto elf = elf_of(fs, path);
    if (!elf || elf->runpath || !elf->rpath) return false;
    for (const auto& e : elf->rpath_entries())
        if (e == "$ORIGIN" || e == "${ORIGIN}") return true;
    return false;
}


// PyTorch: its libtorch_cuda.so (`loader`) names libcublas.so.N and libcublasLt.so.N and finds
// them through a DT_RPATH entry ($ORIGIN/../../nvidia/cu13/lib) that is the wheel's folder.
void through_rpath(const FileSystemView& fs, const std::string& loader, OwnCublas& f) {
    auto elf = elf_of(fs, loader);
    if (!elf || elf->runpath || !elf->rpath) return;
    const std::string origin = path_dirname(loader);
    const std::string own = path_normal(f.dir);
    bool names_own = false;
    for (auto e : elf->rpath_entries()) {
        for (const std::string token : {"${ORIGIN}", "$ORIGIN"})
            for (auto at = e.find(token); at != std::string::npos; at = e.find(token))
                e.replace(at, token.size(), origin);
        names_own = names_own || path_normal(e) == own;
    }
    if (!names_own) return;
    const auto& needed = elf->needed;
    const std::string how = "its " + path_basename(loader) + " names both and finds them through its RPATH";
    const auto needs = [&](const std::string& n) { return std::find(needed.begin(), needed.end(), n) != needed.end(); };
    if (!needs("libcublas.so." + f.major) || !needs("libcublasLt.so." + f.major)) return;
    if (f.cublas_first && f.lt_first) { // also loaded by full path: both ways say so
        f.how += ", and " + how;
        return;
    }
    f.cublas_first = f.lt_first = true;
    f.how = how;
}

// A Python file (`loader`: torch/__init__.py, JAX's jax_plugins/xla_cudaN/__init__.py) that loads
// the wheel's libraries by full path before the framework needs them, as torch 2.15 does
// (_preload_cuda_deps: libcublasLt, then libcublas) and JAX's plugin does (_load_nvidia_libraries:
// libcublas, then libcublasLt). What is loaded first by full path is the wheel's; a libcublas loaded
// before its libcublasLt looks libcublasLt up by name.
void by_full_path(const FileSystemView& fs, const std::string& loader, OwnCublas& f) {
    const std::string text = text_of(fs, loader);
    // torch: ("cublas", "libcublas.so.*[0-9]"); JAX: "libcublas.so.13".
    const auto first = [&](const std::string& stem) {
        auto a = text.find("\"" + stem + "." + f.major + "\"");
        auto b = text.find("\"" + stem + ".*");
        return std::min(a, b);
    };
    const auto cublas = first("libcublas.so"), lt = first("libcublasLt.so");
    if (cublas == std::string::npos) return;
    const std::string file = path_basename(path_dirname(loader)) + "/" + path_basename(loader);
    f.cublas_first = true;
    f.lt_first = lt < cublas;
    f.lt_later = lt != std::string::npos && lt > cublas;
    f.how = "its " + file + " loads " +
                       (f.lt_first ? "libcublasLt and then libcublas" : std::string("libcublas")) +
                       " from the wheel by full path";
}


} // namespace

std::optional<OwnCublas> read_own_cublas(const FileSystemView& fs, const std::string& site,
                                         const std::vector<std::string>& loaders) {
    OwnCublas f;
    const std::string nvidia = path_join(site, "nvidia");
    for (const char* wheel : {"cu13", "cublas"}) {
        const std::string dir = path_join(path_join(nvidia, wheel), "lib");
        std::string major = cublas_major_in(fs, dir);
        if (major.empty()) continue;
        f.dir = dir;
        f.major = major;
        // nvidia_cublas-13.4.1.3 (CUDA 13), nvidia_cublas_cu12-12.9.1.4 (before).
        f.version = installed_dist_version(fs, site, "nvidia_cublas");
        break;
    }
    if (f.dir.empty()) return std::nullopt;
    for (const auto& loader : loaders) {
        if (path_basename(loader) == "__init__.py")
            by_full_path(fs, loader, f);
        else
            through_rpath(fs, loader, f);
    }
    // libcublas needs libcublasLt by name: from its own folder first where its DT_RPATH says so.
    if (f.cublas_first && !f.lt_first &&
        own_folder_first(fs, path_join(f.dir, "libcublas.so." + f.major))) {
        f.lt_first = true;
        f.how += ", and its libcublas finds libcublasLt through its RPATH ($ORIGIN)";
    }
    return f;
}

} // namespace cvm::doctor
