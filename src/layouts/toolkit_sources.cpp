// Where a scattered toolkit's files are, layout by layout (layouts/toolkit_sources.h).
#include "layouts/toolkit_sources.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <system_error>

#include "layouts/toolkit_name_rules.h"
#include "layouts/wheel_record.h"
#include "text/affixes.h"

namespace cvm {

namespace {

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

const std::vector<std::string>& shared_markers() {
    // A bin folder with any of these belongs to more than the toolkit. Host compilers are no
    // sign: a toolkit's own bin may hold gcc/g++ wrappers (Debian's does), which get no shims.
    static const std::vector<std::string> m = {"python", "python3", "ls",   "sh", "bash",
                                               "conda",  "pip",     "perl", "env"};
    return m;
}

// conda-meta/cuda-nvcc-12.4.131-h1234_0.json -> 12.4.131 for "cuda-nvcc"
std::optional<Version> conda_version(const fs::path& meta, const std::string& package,
                                     size_t min_parts) {
    for (const auto& n : folder_names(meta)) {
        if (!starts_with(n, package + "-") || !ends_with(n, ".json")) continue;
        std::string rest = n.substr(package.size() + 1);
        if (rest.empty() || !std::isdigit(static_cast<unsigned char>(rest[0])))
            continue; // cuda-nvcc-impl-...
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
            while (i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i])))
                ++i;
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
        if (installed && (package == "nvidia-cuda-toolkit" || package == "nvidia-cuda-dev") &&
            !found)
            if (auto r = release_from_debian_version(version))
                found =
                    std::make_pair(*r, status.u8string() + " (" + package + " " + version + ")");
        package.clear();
        version.clear();
        installed = false;
    };
    size_t start = 0;
    while (start <= text->size()) {
        size_t nl = text->find('\n', start);
        std::string line =
            text->substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty())
            finish();
        else if (starts_with(line, "Package: "))
            package = line.substr(9);
        else if (starts_with(line, "Version: "))
            version = line.substr(9);
        else if (starts_with(line, "Status: "))
            installed = ends_with(line, " installed");
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

// The files dpkg's lists (<dpkg>/info/<package>[:<arch>].list) say the packages built from the
// source package nvidia-cuda-toolkit installed below `prefix`, as they are on this tree (a list
// names them below /usr; a staged machine has them below its own usr/).
std::vector<fs::path> debian_toolkit_files(const fs::path& dpkg, const fs::path& prefix) {
    std::vector<fs::path> out;
    auto status = platform::read_file(dpkg / "status", std::size_t(64) << 20);
    if (!status) return out;
    for (const auto& p : installed_dpkg_packages(*status)) {
        if (p.source != "nvidia-cuda-toolkit") continue;
        std::optional<std::string> list =
            platform::read_file(dpkg / "info" / (p.name + ":" + p.architecture + ".list"));
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

bool is_toolkit_wheel_folder(const std::string& n) {
    // cu13/ holds a whole CUDA 13 toolkit; CUDA 12 has one folder per component. cuDNN, NCCL and
    // other libraries built on CUDA are not the toolkit's.
    if (n.size() > 2 && starts_with(n, "cu") && std::all_of(n.begin() + 2, n.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
        }))
        return true;
    static const char* const components[] = {"cublas",   "cufft",     "curand",   "cusolver",
                                             "cusparse", "nvjitlink", "nvtx",     "npp",
                                             "nvjpeg",   "cufile",    "nvfatbin", "nvvm"};
    if (starts_with(n, "cuda_")) return true;
    return std::find(std::begin(components), std::end(components), n) != std::end(components);
}

} // namespace

bool is_shared_bin(const fs::path& bin, platform::Os os) {
    std::error_code ec;
    fs::path c = fs::canonical(bin, ec);
    if (!ec) {
        std::string s = c.generic_u8string();
        for (const char* sys :
             {"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"})
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

ToolkitSources prefix_sources(const fs::path& prefix, platform::Os os) {
    ToolkitSources s;
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
    if (is_file(prefix / "include" / "cuda" / "cuda.h"))
        s.includes.push_back({prefix / "include" / "cuda", false});
    s.includes.push_back({prefix / "include", true});
    auto multi = multiarch_dirs(prefix / "lib");
    if (s.nvvm_dirs.empty()) s.target = target_of(multi);
    s.libs.insert(s.libs.end(), multi.begin(), multi.end());
    s.libs.push_back(prefix / "lib64");
    s.libs.push_back(prefix / "lib");
    s.nvvm_dirs.push_back(prefix / "nvvm");
    return s;
}

std::optional<fs::path> debian_prefix(const fs::path& dir) {
    const fs::path home = fs::path("lib") / "nvidia-cuda-toolkit";
    if (is_file(dir / home / "bin" / "nvcc")) return dir;
    fs::path parent = dir.parent_path();
    if (parent.filename() == "lib" && dir.filename() == "nvidia-cuda-toolkit" &&
        is_file(dir / "bin" / "nvcc"))
        return parent.parent_path();
    if (parent.filename() == "lib" && dir.filename() == "cuda" &&
        is_file(parent / "nvidia-cuda-toolkit" / "bin" / "nvcc"))
        return parent.parent_path();
    return std::nullopt;
}

ToolkitSources debian_sources(const fs::path& prefix) {
    ToolkitSources s = prefix_sources(prefix, platform::Os::Linux);
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
    for (const auto& inc : s.includes)
        s.placed_dirs.push_back({inc.first, "include"});
    for (const auto& l : s.libs)
        s.placed_dirs.push_back({l, "lib64"});
    s.placed_dirs.push_back({home, ""});
    return s;
}

ToolkitSources conda_sources(const fs::path& prefix, platform::Os os) {
    ToolkitSources s = prefix_sources(prefix, os);
    s.layout = "conda environment";
    fs::path meta = prefix / "conda-meta";
    s.facts.nvcc = conda_version(meta, "cuda-nvcc", 3);
    s.facts.cudart = conda_version(meta, "cuda-cudart", 3);
    // cuda-version-12.4: the major.minor the environment pins, when cuda.h is absent.
    s.facts.cuda_h = conda_version(meta, "cuda-version", 2);
    if (s.facts.cuda_h) s.facts.cuda_h->parts.resize(2);
    return s;
}

std::optional<ToolkitSources> wheel_sources(const fs::path& dir) {
    fs::path nvidia = dir.filename() == "nvidia" ? dir : dir / "nvidia";
    if (!is_dir(nvidia)) return std::nullopt;
    ToolkitSources s;
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
        if (auto damage = wheel_folder_damage(site, d, "nvidia_", false))
            throw std::runtime_error(*damage);
    s.facts.nvcc = wheel_version(site, "nvidia_cuda_nvcc");
    s.facts.cudart = wheel_version(site, "nvidia_cuda_runtime");
    return s;
}

} // namespace cvm
