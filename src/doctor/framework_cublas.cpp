#include "framework_cublas.h"

#include "spec/spec.h"

namespace cvm::doctor {

namespace {

// The first folder of `path` holding `name` (a file), or none.
std::optional<std::string> first_holding(const FileSystemView& fs, const std::vector<std::string>& path,
                                         const std::string& name) {
    for (const auto& dir : path)
        if (!dir.empty() && fs.is_file(path_join(dir, name))) return dir;
    return std::nullopt;
}

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
    if (!f.own_cublas || f.name == "tensorflow") return std::nullopt;
    const OwnCublas& c = *f.own_cublas;
    const std::string& own_dir = c.dir;
    const std::string cublas = "libcublas.so." + c.major;
    const std::string lt = "libcublasLt.so." + c.major;
    const std::string own = "cuBLAS" + (c.version ? " " + *c.version : std::string());
    // What LD_LIBRARY_PATH gives first, where that is not the wheel's own folder.
    auto other = [&](const std::string& name) -> std::optional<std::string> {
        auto dir = first_holding(fs, library_path, name);
        if (!dir || path_normal(*dir) == path_normal(own_dir)) return std::nullopt;
        return dir;
    };
    const auto other_cublas = other(cublas);
    const auto other_lt = other(lt);
    const bool cublas_own = c.cublas_first || !other_cublas;
    const bool lt_own = c.lt_first || !other_lt;
    const auto named = [&](const std::string& dir, const std::string& name) {
        auto release = cublas_release(fs, dir, name);
        return "the " + name + " in " + dir + (release ? " (" + *release + ")" : std::string());
    };

    FrameworkCublasVerdict v;
    const std::string fix = "select a toolkit whose cuBLAS is " +
                            (c.version ? *c.version + " or later" : std::string("its own")) +
                            " (`cvm list --available " + c.major +
                            "`), so that both libraries it finds are one release";
    if (cublas_own && lt_own) {
        if (!other_cublas && !other_lt)
            v.message = label + " loads its own " + own + " (" + own_dir + "): nothing on cvm's LD_LIBRARY_PATH holds " + cublas;
        else
            v.message = label + " loads its own " + own + " whole (" + own_dir + "): " + c.how +
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
        if (!other_release || !c.version) return false;
        auto a = parse_version(*other_release, 1, 4), b = parse_version(*c.version, 1, 4);
        return a && b && *a < *b;
    };
    if (older()) {
        const std::string fails = "its " + cublas + " (" + own + ") fails to load against the older " + lt + " in " +
                                  *other_lt + " (" + *other_release + "), which lacks symbols it binds to, since it "
                                  "looks libcublasLt up by name and LD_LIBRARY_PATH comes before its RUNPATH";
        if (c.lt_later) {
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
    v.message = label + " would load a mixed cuBLAS under cvm: its own " + cublas + " (" + own + ", " + c.how +
                ") with " + named(*other_lt, lt) + ": its " + cublas +
                " looks libcublasLt up by name, and LD_LIBRARY_PATH, which holds that folder under cvm, comes before "
                "its RUNPATH";
    v.fix = fix;
    return v;
}

} // namespace cvm::doctor
