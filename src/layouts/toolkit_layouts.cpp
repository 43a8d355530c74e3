#include "layouts/toolkit_layouts.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>
#include <system_error>

#include "text/ascii.h"
#include "layouts/wheel_record.h"

namespace cvm {

ToolkitIdentity toolkit_identity_from_files(const ToolkitFacts& t) {
    ToolkitIdentity id;
    if (t.release) {
        id.version = t.release;
        id.how = "version from " + t.evidence;
        return id;
    }
    std::optional<Version> mm = t.cuda_h;
    const std::optional<Version>& component = t.cudart ? t.cudart : t.nvcc;
    if (!mm && component) mm = Version{{component->major(), component->minor()}};
    if (!mm) return id;
    unsigned patch = component && component->parts.size() >= 3 ? component->parts[2] : 0;
    id.version = Version{{mm->major(), mm->minor(), patch}};
    id.how = std::string("version from include/cuda.h and the ") + (t.cudart ? "cudart" : "nvcc") +
             " build number (release unknown to the registry)";
    return id;
}

namespace {

// What every imported toolkit entry holds; the caller adds its folders and note.
Entry imported_toolkit(const Version& version, const fs::path& path) {
    Entry e;
    e.kind = Kind::Cuda;
    e.version = version;
    e.id = e.version.str();
    e.imported = true;
    e.path = path;
    return e;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
std::vector<fs::path> subdirs(const fs::path& dir) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (is_dir(it->path())) out.push_back(it->path());
    std::sort(out.begin(), out.end());
    return out;
}
std::vector<std::string> folder_names(const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        out.push_back(it->path().filename().u8string());
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

bool is_cuda_program(const std::string& name, platform::Os os) {
    std::string n = name;
    if (os == platform::Os::Windows) {
        n = ascii_lower(n);
        if (ends_with(n, ".dll")) return is_cuda_library(name, os);
        if (ends_with(n, ".exe")) n.resize(n.size() - 4);
    }
    // cicc is nvvm's (nvvm/bin); gcc/g++ beside Debian's nvcc are wrappers for nvcc alone.
    static const char* const programs[] = {
        "nvcc", "nvcc.profile", "crt", "ptxas", "cuobjdump", "nvdisasm", "nvlink", "fatbinary", "nvprune",
        "cudafe++", "bin2c", "cu++filt", "__nvcc_device_query", "compute-sanitizer", "cuda-memcheck",
        "nvprof", "cuda-gdb", "cuda-gdbserver", "nvvp", "ncu", "nsys"};
    for (const char* p : programs)
        if (n == (os == platform::Os::Windows ? ascii_lower(p) : std::string(p))) return true;
    return false;
}

bool is_cuda_library(const std::string& name, platform::Os os) {
    static const char* const stems[] = {
        "cudart", "cudadevrt", "cublas", "cublasLt", "cufft", "cufftw", "cufilt", "cuinj64", "culibos",
        "cupti", "curand", "cusolver", "cusolverMg", "cusparse", "nvrtc", "nvrtc-builtins", "nvjpeg",
        "nvToolsExt", "nvblas", "nvperf_host", "nvperf_target", "nvptxcompiler", "nvJitLink", "nvvm",
        "accinj64", "cufile", "cufile_rdma", "nvfatbin", "pcsamplingutil"};
    const bool win = os == platform::Os::Windows;
    std::string base;
    if (win) {
        std::string l = ascii_lower(name);
        if (!ends_with(l, ".dll") && !ends_with(l, ".lib")) return false;
        base = name;
    } else {
        if (!starts_with(name, "lib")) return false;
        if (name.find(".so") == std::string::npos && !ends_with(name, ".a")) return false;
        base = name.substr(3);
    }
    // After the stem: a version or suffix (".so.12", "_static.a"; on Windows "64_12.dll").
    auto ends_stem = [&](size_t at) {
        if (at >= base.size()) return false;
        char c = base[at];
        return c == '.' || c == '_' || (win && std::isdigit(static_cast<unsigned char>(c)));
    };
    for (const char* s : stems)
        if (starts_with(base, s) && ends_stem(std::char_traits<char>::length(s))) return true;
    // NPP's many libraries: nppc, nppial, nppicc, ..., npps.
    if (starts_with(base, "npp")) {
        size_t at = 3;
        while (at < base.size() && std::islower(static_cast<unsigned char>(base[at]))) ++at;
        return at > 3 && ends_stem(at);
    }
    return false;
}

bool is_cuda_header(const std::string& name) {
    static const char* const exact[] = {
        "cub", "thrust", "nv", "crt", "cooperative_groups", "cooperative_groups.h", "nvtx3", "nvfunctional",
        "builtin_types.h", "channel_descriptor.h", "common_functions.h", "host_config.h", "host_defines.h",
        "library_types.h", "math_constants.h", "driver_functions.h", "driver_types.h", "fatbinary_section.h",
        "fatBinaryCtl.h", "mma.h", "mma.hpp", "nvml.h", "nvvm.h", "nv_decode.h", "nvblas.h", "vector_types.h"};
    static const char* const prefixes[] = {
        "cuda", "cuComplex", "cublas", "cufft", "curand", "cusolver", "cusparse", "cupti", "cufile", "npp",
        "nvrtc", "nvjpeg", "nvToolsExt", "nvPTXCompiler", "nvJitLink", "nvperf", "nvfatbin", "sm_",
        "device_", "surface_", "texture_", "vector_functions", "math_functions", "generated_cuda"};
    for (const char* e : exact)
        if (name == e) return true;
    for (const char* p : prefixes)
        if (starts_with(name, p)) return true;
    return false;
}

std::optional<Version> release_from_debian_version(std::string_view version) {
    std::string v(version);
    if (size_t colon = v.find(':'); colon != std::string::npos) v = v.substr(colon + 1); // epoch
    if (size_t dash = v.rfind('-'); dash != std::string::npos) v.resize(dash);       // revision
    // Newer packages put the component version first: 11.8.89~11.8.0.
    if (size_t tilde = v.rfind('~'); tilde != std::string::npos) v = v.substr(tilde + 1);
    auto r = parse_version(v, 3, 3);
    // A release's third number is its update (11.8.0, 11.5.1); 10.1.243 is a build number.
    if (!r || r->parts[2] >= 20) return std::nullopt;
    return r;
}

namespace {

// Where a scattered toolkit's files are. Each list is searched in order; the first file of a
// name wins.
struct Sources {
    std::string layout;                                 // for the note and errors
    fs::path origin;
    std::vector<fs::path> bins;                         // CUDA programs are picked out
    std::vector<std::pair<fs::path, bool>> includes;    // (folder, shared with other packages)
    std::vector<fs::path> libs;                         // CUDA libraries are picked out
    std::vector<fs::path> nvvm_dirs;                    // a whole nvvm/ folder, when there is one
    fs::path libdevice, cicc;                           // otherwise its parts
    std::string target = "x86_64-linux";                // targets/<target> for relative nvcc.profiles
    ToolkitFacts facts;                                 // versions the layout's records gave
    std::vector<std::string> components;
    std::vector<fs::path> own_dirs; // folders that are the toolkit's alone (wheels'): linked whole
    // Files its packages' own records say are the toolkit's (dpkg's lists), for what the name
    // rules miss in shared folders; placed by the folder they are in (`placed_dirs`).
    std::vector<fs::path> owned;
    std::vector<std::pair<fs::path, std::string>> placed_dirs; // (folder, its place in the root)
};

const std::vector<std::string>& shared_markers() {
    // A bin folder with any of these belongs to more than the toolkit. Host compilers are no
    // sign: a toolkit's own bin may hold gcc/g++ wrappers (Debian's does), which get no shims.
    static const std::vector<std::string> m = {"python", "python3", "ls", "sh", "bash", "conda",
                                               "pip", "perl", "env"};
    return m;
}

bool is_shared_bin(const fs::path& bin, platform::Os os) {
    std::error_code ec;
    fs::path c = fs::canonical(bin, ec);
    if (!ec) {
        std::string s = c.generic_u8string();
        for (const char* sys : {"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"})
            if (s == sys) return true;
    }
    for (const auto& m : shared_markers())
        if (is_file(bin / (os == platform::Os::Windows ? m + ".exe" : m))) return true;
    return false;
}

std::optional<Version> cudart_from_file_names(const std::vector<fs::path>& libs) {
    for (const auto& dir : libs)
        for (const auto& n : folder_names(dir))
            if (starts_with(n, "libcudart.so."))
                if (auto v = parse_version(n.substr(13), 3, 3)) return v;
    return std::nullopt;
}

// conda-meta/cuda-nvcc-12.4.131-h1234_0.json -> 12.4.131 for "cuda-nvcc"
std::optional<Version> conda_version(const fs::path& meta, const std::string& package, size_t min_parts) {
    for (const auto& n : folder_names(meta)) {
        if (!starts_with(n, package + "-") || !ends_with(n, ".json")) continue;
        std::string rest = n.substr(package.size() + 1);
        if (rest.empty() || !std::isdigit(static_cast<unsigned char>(rest[0]))) continue; // cuda-nvcc-impl-...
        if (auto v = parse_version(rest.substr(0, rest.find('-')), min_parts, 4)) return v;
    }
    return std::nullopt;
}

// nvidia_cuda_nvcc_cu12-12.4.131.dist-info or nvidia_cuda_nvcc-13.0.88.dist-info -> the version
std::optional<Version> wheel_version(const fs::path& site, const std::string& project) {
    for (const auto& n : folder_names(site)) {
        if (!ends_with(n, ".dist-info") || !starts_with(n, project)) continue;
        std::string rest = n.substr(project.size(), n.size() - project.size() - 10);
        if (starts_with(rest, "_cu")) {
            size_t i = 3;
            while (i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i]))) ++i;
            rest = rest.substr(i);
        }
        if (!starts_with(rest, "-")) continue;
        if (auto v = parse_version(rest.substr(1), 3, 4)) return v;
    }
    return std::nullopt;
}

// The release recorded by dpkg for the package that owns Debian's nvcc.
std::optional<std::pair<Version, std::string>> dpkg_release(const fs::path& status) {
    auto text = platform::read_file(status);
    if (!text) return std::nullopt;
    std::string package, version;
    bool installed = false;
    std::optional<std::pair<Version, std::string>> found;
    auto finish = [&] {
        if (installed && (package == "nvidia-cuda-toolkit" || package == "nvidia-cuda-dev") && !found)
            if (auto r = release_from_debian_version(version))
                found = std::make_pair(*r, status.u8string() + " (" + package + " " + version + ")");
        package.clear();
        version.clear();
        installed = false;
    };
    size_t start = 0;
    while (start <= text->size()) {
        size_t nl = text->find('\n', start);
        std::string line = text->substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) finish();
        else if (starts_with(line, "Package: ")) package = line.substr(9);
        else if (starts_with(line, "Version: ")) version = line.substr(9);
        else if (starts_with(line, "Status: ")) installed = ends_with(line, " installed");
        if (nl == std::string::npos) break;
        start = nl + 1;
    }
    finish();
    return found;
}

std::string target_of(const std::vector<fs::path>& multiarch) {
    for (const auto& d : multiarch)
        if (starts_with(d.filename().u8string(), "aarch64")) return "sbsa-linux";
    return "x86_64-linux";
}

// A prefix with CUDA among other packages: /usr (Debian, Ubuntu, RPM's lib64), a conda
// environment, /usr/local.
Sources prefix_sources(const fs::path& prefix, platform::Os os) {
    Sources s;
    s.origin = prefix;
    const bool win = os == platform::Os::Windows;
    if (win) {
        fs::path lib = prefix / "Library";
        s.bins = {lib / "bin"};
        s.includes = {{lib / "include", true}};
        s.libs = {lib / "lib" / "x64", lib / "lib"};
        s.nvvm_dirs = {lib / "nvvm"};
        return s;
    }
    // conda's cuda-* packages keep headers and libraries under targets/<arch>.
    for (const auto& t : subdirs(prefix / "targets")) {
        s.target = t.filename().u8string();
        s.bins.push_back(t / "bin");
        s.includes.push_back({t / "include", false});
        s.libs.push_back(t / "lib");
        s.nvvm_dirs.push_back(t / "nvvm");
        break;
    }
    s.bins.push_back(prefix / "bin");
    // RPM-style packages put the headers in include/cuda/ (not libcu++'s cuda/ folder).
    if (is_file(prefix / "include" / "cuda" / "cuda.h")) s.includes.push_back({prefix / "include" / "cuda", false});
    s.includes.push_back({prefix / "include", true});
    auto multi = multiarch_dirs(prefix / "lib");
    if (s.nvvm_dirs.empty()) s.target = target_of(multi);
    s.libs.insert(s.libs.end(), multi.begin(), multi.end());
    s.libs.push_back(prefix / "lib64");
    s.libs.push_back(prefix / "lib");
    s.nvvm_dirs.push_back(prefix / "nvvm");
    return s;
}

// The files dpkg's lists (<dpkg>/info/<package>[:<arch>].list) say the packages built from the
// source package nvidia-cuda-toolkit installed below `prefix`, as they are on this tree (a list
// names them below /usr; a staged machine has them below its own usr/).
std::vector<fs::path> debian_toolkit_files(const fs::path& dpkg, const fs::path& prefix) {
    std::vector<fs::path> out;
    auto status = platform::read_file(dpkg / "status", std::size_t(64) << 20);
    if (!status) return out;
    for (const auto& p : installed_dpkg_packages(*status)) {
        if (p.source != "nvidia-cuda-toolkit") continue;
        std::optional<std::string> list = platform::read_file(dpkg / "info" / (p.name + ":" + p.architecture + ".list"));
        if (!list) list = platform::read_file(dpkg / "info" / (p.name + ".list"));
        if (!list) continue;
        size_t start = 0;
        while (start < list->size()) {
            size_t nl = list->find('\n', start);
            if (nl == std::string::npos) nl = list->size();
            std::string line = list->substr(start, nl - start);
            start = nl + 1;
            if (!starts_with(line, "/usr/")) continue;
            fs::path file = prefix / fs::u8path(line.substr(5));
            if (is_file(file)) out.push_back(file);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

// Debian/Ubuntu's nvidia-cuda-toolkit: the real nvcc in <prefix>/lib/nvidia-cuda-toolkit/bin,
// its other programs in <prefix>/bin. `dir` may be the prefix, that folder, or <prefix>/lib/cuda.
std::optional<fs::path> debian_prefix(const fs::path& dir) {
    const fs::path home = fs::path("lib") / "nvidia-cuda-toolkit";
    if (is_file(dir / home / "bin" / "nvcc")) return dir;
    fs::path parent = dir.parent_path();
    if (parent.filename() == "lib" && dir.filename() == "nvidia-cuda-toolkit" && is_file(dir / "bin" / "nvcc"))
        return parent.parent_path();
    if (parent.filename() == "lib" && dir.filename() == "cuda" &&
        is_file(parent / "nvidia-cuda-toolkit" / "bin" / "nvcc"))
        return parent.parent_path();
    return std::nullopt;
}

Sources debian_sources(const fs::path& prefix) {
    Sources s = prefix_sources(prefix, platform::Os::Linux);
    fs::path home = prefix / "lib" / "nvidia-cuda-toolkit";
    s.layout = "Debian's nvidia-cuda-toolkit";
    s.origin = home;
    s.bins.insert(s.bins.begin(), home / "bin");
    s.nvvm_dirs.clear();
    s.libdevice = home / "libdevice";
    s.cicc = home / "bin" / "cicc";
    // /usr -> /var/lib/dpkg/status, relative so a test can build the tree anywhere.
    const fs::path dpkg = prefix.parent_path() / "var" / "lib" / "dpkg";
    if (auto r = dpkg_release(dpkg / "status")) {
        s.facts.release = r->first;
        s.facts.evidence = r->second;
    }
    s.owned = debian_toolkit_files(dpkg, prefix);
    for (const auto& inc : s.includes) s.placed_dirs.push_back({inc.first, "include"});
    for (const auto& l : s.libs) s.placed_dirs.push_back({l, "lib64"});
    s.placed_dirs.push_back({home, ""});
    return s;
}

Sources conda_sources(const fs::path& prefix, platform::Os os) {
    Sources s = prefix_sources(prefix, os);
    s.layout = "conda environment";
    fs::path meta = prefix / "conda-meta";
    s.facts.nvcc = conda_version(meta, "cuda-nvcc", 3);
    s.facts.cudart = conda_version(meta, "cuda-cudart", 3);
    // cuda-version-12.4: the major.minor the environment pins, when cuda.h is absent.
    s.facts.cuda_h = conda_version(meta, "cuda-version", 2);
    if (s.facts.cuda_h) s.facts.cuda_h->parts.resize(2);
    return s;
}

bool is_toolkit_wheel_folder(const std::string& n) {
    // cu13/ holds a whole CUDA 13 toolkit; CUDA 12 has one folder per component. cuDNN, NCCL and
    // other libraries built on CUDA are not the toolkit's.
    if (n.size() > 2 && starts_with(n, "cu") &&
        std::all_of(n.begin() + 2, n.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return true;
    static const char* const components[] = {"cublas", "cufft", "curand", "cusolver", "cusparse", "nvjitlink",
                                             "nvtx", "npp", "nvjpeg", "cufile", "nvfatbin", "nvvm"};
    if (starts_with(n, "cuda_")) return true;
    return std::find(std::begin(components), std::end(components), n) != std::end(components);
}

// site-packages/nvidia/ of pip wheels; `dir` may be site-packages or its nvidia/.
std::optional<Sources> wheel_sources(const fs::path& dir) {
    fs::path nvidia = dir.filename() == "nvidia" ? dir : dir / "nvidia";
    if (!is_dir(nvidia)) return std::nullopt;
    Sources s;
    s.layout = "pip wheels";
    s.origin = nvidia;
    for (const auto& d : subdirs(nvidia)) {
        std::string n = d.filename().u8string();
        if (!is_toolkit_wheel_folder(n)) continue;
        s.components.push_back(n);
        s.own_dirs.push_back(d);
        s.bins.push_back(d / "bin");
        s.includes.push_back({d / "include", false});
        s.libs.push_back(d / "lib");
        s.libs.push_back(d / "lib64");
        s.nvvm_dirs.push_back(d / "nvvm");
    }
    if (s.components.empty()) return std::nullopt;
    fs::path site = nvidia.parent_path();
    // A wheel pip left half-installed is refused before anything links to it.
    for (const auto& d : s.own_dirs)
        if (auto damage = wheel_folder_damage(site, d, "nvidia_", false)) throw std::runtime_error(*damage);
    s.facts.nvcc = wheel_version(site, "nvidia_cuda_nvcc");
    s.facts.cudart = wheel_version(site, "nvidia_cuda_runtime");
    return s;
}

std::optional<ToolkitImport> assemble_toolkit(const fs::path& dir, Sources s, platform::Os os,
                                              const IdentifyToolkit& identify) {
    const bool win = os == platform::Os::Windows;
    const std::string exe = win ? "nvcc.exe" : "nvcc";
    const std::string lib_rel = win ? "lib/x64" : "lib64";
    std::vector<RootLink> plan;
    auto sub = [&](const char* name) {
        std::vector<fs::path> out;
        for (const auto& d : s.own_dirs)
            if (is_dir(d / name)) out.push_back(d / name);
        return out;
    };
    if (!s.own_dirs.empty()) {
        // Folders of the toolkit's own (NVIDIA's wheels): their whole trees, as the folders hold
        // them (include/cccl/, lib/stubs/, cccl/lib/cmake/...), the libraries both in lib/ (as the
        // wheels' nvcc.profile says) and in lib64/ (as a toolkit's root has them).
        auto not_cudnn_nccl = [](const std::string& n) { return !starts_with(n, "cudnn") && !starts_with(n, "nccl"); };
        plan_tree(plan, "bin", sub("bin"), [](const std::string&) { return true; });
        plan_tree(plan, "include", sub("include"), not_cudnn_nccl);
        std::vector<fs::path> libs = sub("lib");
        for (const auto& l : sub("lib64")) libs.push_back(l);
        plan_tree(plan, lib_rel, libs, not_cudnn_nccl);
        if (!win) plan_tree(plan, "lib", libs, not_cudnn_nccl);
        static const char* const placed[] = {"bin", "include", "lib", "lib64", "nvvm"};
        plan_tree(plan, "", s.own_dirs, [](const std::string& n) {
            return std::find(std::begin(placed), std::end(placed), n) == std::end(placed);
        });
    } else {
        for (const auto& b : s.bins) plan_files(plan, "bin", b, [&](const std::string& n) { return is_cuda_program(n, os); });
        for (const auto& [inc, shared] : s.includes)
            plan_files(plan, "include", inc, [shared = shared](const std::string& n) {
                if (shared) return is_cuda_header(n);
                return !starts_with(n, "cudnn") && !starts_with(n, "nccl"); // cuDNN is imported on its own
            });
        for (const auto& l : s.libs) {
            plan_files(plan, lib_rel, l, [&](const std::string& n) { return is_cuda_library(n, os); });
            // The driver's stub for linking without a driver: CUDA::cuda_driver, nvcc -lcuda.
            plan_files(plan, lib_rel + "/stubs", l / "stubs", [&](const std::string& n) {
                return is_cuda_library(n, os) || starts_with(n, "libcuda.so") || ascii_lower(n) == "cuda.lib";
            });
        }
    }
    auto planned = [&](const std::string& rel) {
        return std::any_of(plan.begin(), plan.end(), [&](const RootLink& l) { return l.rel == rel; });
    };
    // What the packages' records add beyond the name rules (cupti's include/Openmp/,
    // lib64/stubs/libnvidia-ml.so, lib64/pkgconfig/cuda.pc): each file in its place, unless a
    // folder above it is linked whole already. Programs stay those the rules pick: Debian's
    // bin/gcc beside nvcc is a wrapper that must never come first on PATH.
    std::set<std::string> taken;
    for (const auto& l : plan) taken.insert(l.rel);
    for (const auto& file : s.owned) {
        const std::pair<fs::path, std::string>* best = nullptr;
        for (const auto& pd : s.placed_dirs) {
            auto rel = file.lexically_relative(pd.first);
            if (rel.empty() || *rel.begin() == ".." || (best && pd.first.native().size() <= best->first.native().size()))
                continue;
            best = &pd;
        }
        if (!best) continue;
        std::string rel = file.lexically_relative(best->first).generic_u8string();
        if (!best->second.empty()) rel = best->second + "/" + rel;
        if (starts_with(rel, "bin/")) continue;
        bool covered = false;
        for (size_t slash = rel.find('/'); slash != std::string::npos && !covered; slash = rel.find('/', slash + 1))
            covered = taken.count(rel.substr(0, slash)) > 0;
        if (!covered && taken.insert(rel).second) plan.push_back({rel, file});
    }
    bool has_nvcc = planned("bin/" + exe);
    bool has_cudart = std::any_of(plan.begin(), plan.end(), [&](const RootLink& l) {
        std::string n = fs::u8path(l.rel).filename().u8string();
        return starts_with(l.rel, lib_rel + "/") && l.rel.find("/stubs/") == std::string::npos &&
               (starts_with(n, "libcudart.so") || starts_with(ascii_lower(n), "cudart"));
    });
    if (!has_nvcc && !has_cudart) return std::nullopt; // headers or libraries alone are no toolkit
    if (!win) {
        // Wheels ship only libcudart.so.12; find_library(cudart) and -lcudart want libcudart.so.
        std::vector<RootLink> extra;
        for (const auto& l : plan) {
            size_t so = l.rel.find(".so.");
            if ((!starts_with(l.rel, lib_rel + "/") && !starts_with(l.rel, "lib/")) || so == std::string::npos) continue;
            std::string bare = l.rel.substr(0, so + 3);
            if (!planned(bare) && std::none_of(extra.begin(), extra.end(), [&](const RootLink& e) { return e.rel == bare; }))
                extra.push_back({bare, l.target});
        }
        plan.insert(plan.end(), extra.begin(), extra.end());
    }
    // nvvm/libdevice (and cicc, libnvvm): whole when the layout has the folder, else its parts.
    for (const auto& n : s.nvvm_dirs)
        if (is_dir(n / "libdevice")) {
            plan_link(plan, "nvvm", n);
            break;
        }
    if (!planned("nvvm")) {
        plan_link(plan, "nvvm/libdevice", s.libdevice);
        plan_link(plan, "nvvm/bin/" + std::string(win ? "cicc.exe" : "cicc"), s.cicc);
        for (const auto& l : s.libs)
            plan_files(plan, "nvvm/" + lib_rel, l, [](const std::string& n) { return starts_with(n, "libnvvm.so"); });
        for (const auto& [inc, shared] : s.includes) plan_link(plan, "nvvm/include/nvvm.h", inc / "nvvm.h");
    }
    // nvcc finds nvcc.profile beside the path it was run by (not its real path); a profile with
    // paths relative to it ($(TOP)/targets/x86_64-linux/include) then needs targets/ here too.
    for (const auto& l : plan) {
        if (l.rel != "bin/nvcc.profile") continue;
        auto text = platform::read_file(l.target);
        if (!text || (text->find("$(_TARGET_DIR_)") == std::string::npos && text->find("/targets/") == std::string::npos))
            break;
        std::vector<RootLink> mirror;
        for (const auto& m : plan) {
            if (starts_with(m.rel, "include/")) mirror.push_back({"targets/" + s.target + "/" + m.rel, m.target});
            if (starts_with(m.rel, lib_rel + "/"))
                mirror.push_back({"targets/" + s.target + "/lib/" + m.rel.substr(lib_rel.size() + 1), m.target});
        }
        plan.insert(plan.end(), mirror.begin(), mirror.end());
        break;
    }

    ToolkitFacts& f = s.facts;
    std::vector<fs::path> inc_dirs;
    for (const auto& [inc, shared] : s.includes) inc_dirs.push_back(inc);
    for (const auto& inc : inc_dirs)
        if (auto h = platform::read_file(inc / "cuda.h")) {
            if (auto v = toolkit_version_from_cuda_h(*h)) f.cuda_h = v;
            break;
        }
    if (!f.cudart && !win) f.cudart = cudart_from_file_names(s.libs);
    if (!f.release && !f.cudart && !f.nvcc && has_nvcc) {
        auto nvcc = std::find_if(plan.begin(), plan.end(), [&](const RootLink& l) { return l.rel == "bin/" + exe; });
        if (auto out = platform::capture_output(nvcc->target, {nvcc->target.u8string(), "--version"}))
            f.nvcc = nvcc_version_from_output(*out);
    }
    ToolkitIdentity id = identify(f);
    if (!id.version)
        throw std::runtime_error(
            dir.u8string() + " holds a CUDA toolkit (" + s.layout +
            ") but nothing tells its version: no package record, no CUDA_VERSION in include/cuda.h, no "
            "libcudart.so.X.Y.Z, and nvcc --version did not answer; import the toolkit's own root (the folder "
            "with version.json) instead");

    ToolkitImport out;
    Entry& e = out.entry;
    e = imported_toolkit(*id.version, s.origin);
    e.origin = s.origin;
    if (planned("bin/" + exe) || std::any_of(plan.begin(), plan.end(), [](const RootLink& l) { return starts_with(l.rel, "bin/"); }))
        e.bin_dirs = {"bin"};
    if (std::any_of(plan.begin(), plan.end(), [](const RootLink& l) { return starts_with(l.rel, "include/"); }))
        e.include_dirs = {"include"};
    e.lib_dirs = {lib_rel};
    e.components = s.components;
    e.note = id.how + "; assembled from " + s.layout + " at " + s.origin.u8string();
    if (!has_nvcc) e.note += "; runtime only (no nvcc)";
    out.plan = std::move(plan);
    return out;
}

} // namespace

std::optional<ToolkitImport> toolkit_import_of(const fs::path& dir, platform::Os os, const IdentifyToolkit& identify) {
    const bool win = os == platform::Os::Windows;
    if (auto w = wheel_sources(dir))
        if (auto t = assemble_toolkit(dir, *w, os, identify)) return t;
    if (!win)
        if (auto prefix = debian_prefix(dir)) return assemble_toolkit(dir, debian_sources(*prefix), os, identify);
    if (is_dir(dir / "conda-meta")) return assemble_toolkit(dir, conda_sources(dir, os), os, identify);

    FolderFacts facts = detect_folder(dir, os);
    const std::string undated = "cannot tell the CUDA version of " + dir.u8string() +
                                " (no version.json, version.txt, CUDA_VERSION in include/cuda.h or working bin/nvcc); "
                                "import the toolkit's own root, the folder with version.json";
    if (!facts.toolkit) {
        // nvcc or cuda.h without anything that dates them: a toolkit, but not one to guess at.
        if (is_file(dir / "bin" / (win ? "nvcc.exe" : "nvcc")) || is_file(dir / "include" / "cuda.h"))
            throw std::runtime_error(undated);
        return std::nullopt;
    }
    if (is_shared_bin(dir / "bin", os)) {
        // nvcc among other programs (/usr, /usr/local): only CUDA's files go into the entry.
        Sources s = prefix_sources(dir, os);
        s.layout = "a shared prefix";
        return assemble_toolkit(dir, s, os, identify);
    }
    ToolkitIdentity id = identify(*facts.toolkit);
    if (!id.version) throw std::runtime_error(undated);
    ToolkitImport out;
    Entry& e = out.entry;
    e = imported_toolkit(*id.version, dir);
    e.include_dirs = facts.toolkit->include_dirs;
    e.lib_dirs = facts.toolkit->lib_dirs;
    e.bin_dirs = facts.toolkit->bin_dirs;
    e.note = id.how;
    return out;
}

} // namespace cvm
