#include "framework_cublas.h"

#include "binary/elf_reader.h"
#include "core/spec.h"

#include <algorithm>
#include <filesystem>

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

std::string normal(const std::string& path) {
    std::string s = std::filesystem::path(path).lexically_normal().generic_string();
    while (s.size() > 1 && s.back() == '/')
        s.pop_back();
    return s;
}

// PyTorch: its libtorch_cuda.so (`loader`) names libcublas.so.N and libcublasLt.so.N and finds
// them through a DT_RPATH entry ($ORIGIN/../../nvidia/cu13/lib) that is the wheel's folder.
void through_rpath(const FileSystemView& fs, const std::string& loader, FrameworkInstall& f) {
    auto elf = elf_of(fs, loader);
    if (!elf || elf->runpath || !elf->rpath) return;
    const std::string origin = path_dirname(loader);
    const std::string own = normal(*f.own_cublas_dir);
    bool names_own = false;
    for (auto e : elf->rpath_entries()) {
        for (const std::string token : {"${ORIGIN}", "$ORIGIN"})
            for (auto at = e.find(token); at != std::string::npos; at = e.find(token))
                e.replace(at, token.size(), origin);
        names_own = names_own || normal(e) == own;
    }
    if (!names_own) return;
    const auto& needed = elf->needed;
    const std::string how = "its " + path_basename(loader) + " names both and finds them through its RPATH";
    const auto needs = [&](const std::string& n) { return std::find(needed.begin(), needed.end(), n) != needed.end(); };
    if (!needs("libcublas.so." + f.own_cublas_major) || !needs("libcublasLt.so." + f.own_cublas_major)) return;
    if (f.own_cublas_first && f.own_cublaslt_first) { // also loaded by full path: both ways say so
        f.own_cublas_how += ", and " + how;
        return;
    }
    f.own_cublas_first = f.own_cublaslt_first = true;
    f.own_cublas_how = how;
}

// A Python file (`loader`: torch/__init__.py, JAX's jax_plugins/xla_cudaN/__init__.py) that loads
// the wheel's libraries by full path before the framework needs them, as torch 2.15 does
// (_preload_cuda_deps: libcublasLt, then libcublas) and JAX's plugin does (_load_nvidia_libraries:
// libcublas, then libcublasLt). What is loaded first by full path is the wheel's; a libcublas loaded
// before its libcublasLt looks libcublasLt up by name.
void by_full_path(const FileSystemView& fs, const std::string& loader, FrameworkInstall& f) {
    const std::string text = text_of(fs, loader);
    // torch: ("cublas", "libcublas.so.*[0-9]"); JAX: "libcublas.so.13".
    const auto first = [&](const std::string& stem) {
        auto a = text.find("\"" + stem + "." + f.own_cublas_major + "\"");
        auto b = text.find("\"" + stem + ".*");
        return std::min(a, b);
    };
    const auto cublas = first("libcublas.so"), lt = first("libcublasLt.so");
    if (cublas == std::string::npos) return;
    const std::string file = path_basename(path_dirname(loader)) + "/" + path_basename(loader);
    f.own_cublas_first = true;
    f.own_cublaslt_first = lt < cublas;
    f.own_cublaslt_later = lt != std::string::npos && lt > cublas;
    f.own_cublas_how = "its " + file + " loads " +
                       (f.own_cublaslt_first ? "libcublasLt and then libcublas" : std::string("libcublas")) +
                       " from the wheel by full path";
}

// The first folder of `path` holding `name` (a file), or none.
std::optional<std::string> first_holding(const FileSystemView& fs, const std::vector<std::string>& path,
                                         const std::string& name) {
    for (const auto& dir : path)
        if (!dir.empty() && fs.is_file(path_join(dir, name))) return dir;
    return std::nullopt;
}

} // namespace

void find_own_cublas(const FileSystemView& fs, const std::string& site, const std::vector<std::string>& loaders,
                     FrameworkInstall& f) {
    const std::string nvidia = path_join(site, "nvidia");
    for (const char* wheel : {"cu13", "cublas"}) {
        const std::string dir = path_join(path_join(nvidia, wheel), "lib");
        std::string major = cublas_major_in(fs, dir);
        if (major.empty()) continue;
        f.own_cublas_dir = dir;
        f.own_cublas_major = major;
        // nvidia_cublas-13.4.1.3 (CUDA 13), nvidia_cublas_cu12-12.9.1.4 (before).
        f.own_cublas_version = installed_dist_version(fs, site, "nvidia_cublas");
        break;
    }
    if (!f.own_cublas_dir) return;
    for (const auto& loader : loaders) {
        if (path_basename(loader) == "__init__.py")
            by_full_path(fs, loader, f);
        else
            through_rpath(fs, loader, f);
    }
    // libcublas needs libcublasLt by name: from its own folder first where its DT_RPATH says so.
    if (f.own_cublas_first && !f.own_cublaslt_first &&
        own_folder_first(fs, path_join(*f.own_cublas_dir, "libcublas.so." + f.own_cublas_major))) {
        f.own_cublaslt_first = true;
        f.own_cublas_how += ", and its libcublas finds libcublasLt through its RPATH ($ORIGIN)";
    }
}

namespace {

// The release of cuBLAS library `name` in `dir`, where its files say.
std::optional<std::string> cublas_release(const FileSystemView& fs, const std::string& dir, const std::string& name) {
    // The real file's name: libcublasLt.so.13.1.0.3 (NVIDIA's archives and runfiles, Debian).
    if (auto real = fs.real_path(path_join(dir, name))) {
        const std::string base = path_basename(*real);
        if (base.rfind(name + ".", 0) == 0) {
            // libcublasLt.so.13 -> libcublasLt.so.13.1.0.3: the release follows ".so.".
            const std::string rest = base.substr(base.find(".so.") + 4);
            if (auto v = parse_version(rest, 3, 4)) return v->str();
        }
    }
    // A toolkit made of NVIDIA's wheels keeps their dist-info beside lib64 (cvm import's layout); a
    // wheel's own folder (SITE/nvidia/cu13/lib) has it in SITE.
    const std::string root = path_dirname(dir);
    if (auto v = installed_dist_version(fs, path_join(root, "dist-info"), "nvidia_cublas")) return v;
    if (path_basename(path_dirname(root)) == "nvidia")
        if (auto v = installed_dist_version(fs, path_dirname(path_dirname(root)), "nvidia_cublas")) return v;
    // NVIDIA's version.json: "libcublas" : { "name" : ..., "version" : "13.1.0.3" }.
    const std::string text = text_of(fs, path_join(root, "version.json"));
    auto at = text.find("\"libcublas\"");
    if (at == std::string::npos) return std::nullopt;
    at = text.find("\"version\"", at);
    if (at == std::string::npos) return std::nullopt;
    auto open = text.find('"', text.find(':', at) + 1);
    auto close = open == std::string::npos ? open : text.find('"', open + 1);
    if (close == std::string::npos) return std::nullopt;
    if (auto v = parse_version(text.substr(open + 1, close - open - 1), 3, 4)) return v->str();
    return std::nullopt;
}

} // namespace

std::optional<FrameworkCublasVerdict> judge_own_cublas(const FrameworkInstall& f, const std::string& label,
                                                       const std::vector<std::string>& library_path,
                                                       const FileSystemView& fs) {
    // TensorFlow's way to its cuBLAS wheel is not known here (XLA opens it by name): not judged.
    if (!f.own_cublas_dir || f.name == "tensorflow") return std::nullopt;
    const std::string& own_dir = *f.own_cublas_dir;
    const std::string cublas = "libcublas.so." + f.own_cublas_major;
    const std::string lt = "libcublasLt.so." + f.own_cublas_major;
    const std::string own = "cuBLAS" + (f.own_cublas_version ? " " + *f.own_cublas_version : std::string());
    // What LD_LIBRARY_PATH gives first, where that is not the wheel's own folder.
    auto other = [&](const std::string& name) -> std::optional<std::string> {
        auto dir = first_holding(fs, library_path, name);
        if (!dir || normal(*dir) == normal(own_dir)) return std::nullopt;
        return dir;
    };
    const auto other_cublas = other(cublas);
    const auto other_lt = other(lt);
    const bool cublas_own = f.own_cublas_first || !other_cublas;
    const bool lt_own = f.own_cublaslt_first || !other_lt;
    const auto named = [&](const std::string& dir, const std::string& name) {
        auto release = cublas_release(fs, dir, name);
        return "the " + name + " in " + dir + (release ? " (" + *release + ")" : std::string());
    };

    FrameworkCublasVerdict v;
    const std::string fix = "select a toolkit whose cuBLAS is " +
                            (f.own_cublas_version ? *f.own_cublas_version + " or later" : std::string("its own")) +
                            " (`cvm list --available " + f.own_cublas_major +
                            "`), so that both libraries it finds are one release";
    if (cublas_own && lt_own) {
        if (!other_cublas && !other_lt)
            v.message = label + " loads its own " + own + " (" + own_dir + "): nothing on cvm's LD_LIBRARY_PATH holds " + cublas;
        else
            v.message = label + " loads its own " + own + " whole (" + own_dir + "): " + f.own_cublas_how +
                        ", ahead of LD_LIBRARY_PATH, so " + (other_cublas ? named(*other_cublas, cublas) : named(*other_lt, lt)) +
                        " does not replace it";
        return v;
    }
    if (!cublas_own) {
        v.kind = FrameworkCublasVerdict::Kind::Other;
        v.message = label + " would load " + named(*other_cublas, cublas) + " in place of its own " + own + " (" +
                    own_dir + "): it opens " + cublas + " by name, and that folder comes first on LD_LIBRARY_PATH under cvm; a "
                    "cuBLAS older than the one it was built with lacks symbols it needs";
        v.fix = fix;
        return v;
    }
    // Its own libcublas first, which looks libcublasLt up by name: LD_LIBRARY_PATH's comes first.
    const auto other_release = cublas_release(fs, *other_lt, lt);
    const auto older = [&]() {
        if (!other_release || !f.own_cublas_version) return false;
        auto a = parse_version(*other_release, 1, 4), b = parse_version(*f.own_cublas_version, 1, 4);
        return a && b && *a < *b;
    };
    if (older()) {
        const std::string fails = "its " + cublas + " (" + own + ") fails to load against the older " + lt + " in " +
                                  *other_lt + " (" + *other_release + "), which lacks symbols it binds to, since it "
                                  "looks libcublasLt up by name and LD_LIBRARY_PATH comes before its RUNPATH";
        if (f.own_cublaslt_later) {
            v.message = label + " loads its own " + own + " whole (" + own_dir + ") after a failed first try: " + fails +
                        "; it then loads its own libcublasLt by full path, and libcublas again through its "
                        "extensions' RPATH";
            return v;
        }
        v.kind = FrameworkCublasVerdict::Kind::Other;
        v.message = label + " would fail to load cuBLAS under cvm: " + fails;
        v.fix = fix;
        return v;
    }
    v.kind = FrameworkCublasVerdict::Kind::Mixed;
    v.message = label + " would load a mixed cuBLAS under cvm: its own " + cublas + " (" + own + ", " + f.own_cublas_how +
                ") with " + named(*other_lt, lt) + ": its " + cublas +
                " looks libcublasLt up by name, and LD_LIBRARY_PATH, which holds that folder under cvm, comes before "
                "its RUNPATH";
    v.fix = fix;
    return v;
}

} // namespace cvm::doctor
