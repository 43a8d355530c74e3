#include "layouts/folder_facts.h"
#include "text/pattern.h"
#include "spec/redist_platform.h"

#include <algorithm>
#include <system_error>

#include <nlohmann/json.hpp>

namespace cvm {

bool is_dir(const fs::path& p) {
    std::error_code ec;
    return fs::is_directory(p, ec);
}

bool is_file(const fs::path& p) {
    std::error_code ec;
    return fs::exists(p, ec) && !fs::is_directory(p, ec);
}

std::vector<fs::path> sorted_children(const fs::path& dir) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        out.push_back(it->path());
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<fs::path> multiarch_dirs(const fs::path& lib) {
    std::vector<fs::path> out;
    for (const auto& p : sorted_children(lib)) {
        std::string n = p.filename().u8string();
        if (n.size() > 10 && n.compare(n.size() - 10, 10, "-linux-gnu") == 0) out.push_back(p);
    }
    return out;
}

std::optional<Version> component_version_from_version_json(std::string_view json,
                                                           const std::string& component) {
    auto doc = nlohmann::json::parse(json, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return std::nullopt;
    auto it = doc.find(component);
    if (it == doc.end() || !it->is_object()) return std::nullopt;
    auto v = it->find("version");
    if (v == it->end() || !v->is_string()) return std::nullopt;
    return parse_version(v->get<std::string>(), 1, 4);
}

std::optional<Version> toolkit_version_from_version_json(std::string_view json) {
    auto v = component_version_from_version_json(json, "cuda");
    if (!v || v->parts.size() < 2) return std::nullopt;
    while (v->parts.size() < 3) v->parts.push_back(0);
    return v;
}

std::optional<Version> toolkit_version_from_version_txt(std::string_view text) {
    static const Pattern re(R"(CUDA Version\s+([0-9]+\.[0-9]+(\.[0-9]+)?))");
    auto m = re.search(text);
    if (!m) return std::nullopt;
    auto v = parse_version((*m)[1], 2, 3);
    if (v)
        while (v->parts.size() < 3) v->parts.push_back(0);
    return v;
}

static std::optional<long> define_value(std::string_view text, const std::string& name) {
    const Pattern re("#\\s*define\\s+" + name + "\\s+\\(?\\s*([0-9]+)");
    auto m = re.search(text);
    if (!m) return std::nullopt;
    const std::string& digits = (*m)[1];
    if (digits.size() > 9) return std::nullopt;
    return std::stol(digits);
}

std::optional<Version> toolkit_version_from_cuda_h(std::string_view text) {
    auto v = define_value(text, "CUDA_VERSION");
    if (!v || *v < 1000) return std::nullopt;
    return Version{{static_cast<unsigned>(*v / 1000), static_cast<unsigned>((*v % 1000) / 10)}};
}

std::optional<Version> nvcc_version_from_output(std::string_view text) {
    static const Pattern re(R"(release\s+[0-9]+\.[0-9]+,\s*V([0-9]+\.[0-9]+\.[0-9]+))");
    auto m = re.search(text);
    if (!m) return std::nullopt;
    return parse_version((*m)[1], 3, 3);
}

std::optional<Version> cudnn_version_from_header(std::string_view text) {
    auto major = define_value(text, "CUDNN_MAJOR");
    auto minor = define_value(text, "CUDNN_MINOR");
    auto patch = define_value(text, "CUDNN_PATCHLEVEL");
    if (!major || !minor || !patch) return std::nullopt;
    return Version{{static_cast<unsigned>(*major), static_cast<unsigned>(*minor),
                    static_cast<unsigned>(*patch)}};
}

std::optional<CudnnNameInfo> cudnn_info_from_name(std::string_view name) {
    const std::string_view s = name;
    // Wheel or dist-info: nvidia_cudnn_cu12-9.1.0.70[-py3-none-...][.dist-info]
    static const Pattern wheel(R"(^nvidia[_-]cudnn[_-]cu([0-9]+)-([0-9]+(\.[0-9]+){2,3}))");
    // Redist: cudnn-linux-x86_64-8.9.7.29_cuda12-archive
    static const Pattern redist(
        R"(^cudnn-(linux|windows)-([a-z0-9_]+)-([0-9]+(\.[0-9]+){2,3})_cuda([0-9]+(\.[0-9]+)?)-archive)");
    // Legacy: cudnn-11.2-windows-x64-v8.1.0.77, cudnn-10.2-windows10-x64-v7.6.5.32
    static const Pattern legacy(
        R"(^cudnn-([0-9]+\.[0-9]+)-(linux|windows[0-9]*)-(x64|ppc64le|aarch64sbsa)-v([0-9]+(\.[0-9]+){2,3}))");
    CudnnNameInfo info;
    if (auto m = wheel.search(s)) {
        info.version = *parse_version((*m)[2], 3, 4);
        info.cuda = parse_version((*m)[1], 1, 1);
        return info;
    }
    if (auto m = redist.search(s)) {
        info.version = *parse_version((*m)[3], 3, 4);
        info.cuda = parse_version((*m)[5], 1, 2); // 8.3/8.4 builds name a minor: _cuda11.5
        info.platform = (*m)[1] + "-" + (*m)[2];
        return info;
    }
    if (auto m = legacy.search(s)) {
        info.version = *parse_version((*m)[4], 3, 4);
        info.cuda = parse_version((*m)[1], 2, 2);
        std::string os = is_windows_platform((*m)[2]) ? "windows" : "linux";
        std::string arch = (*m)[3] == "x64" ? "x86_64" : (*m)[3] == "ppc64le" ? "ppc64le" : "sbsa";
        info.platform = os + "-" + arch;
        return info;
    }
    return std::nullopt;
}

namespace {


bool any_file_starting(const fs::path& dir, const std::string& prefix) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string n = it->path().filename().u8string();
        std::string lower = n;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (lower.rfind(prefix, 0) == 0) return true;
    }
    return false;
}

// The dist-info folders that describe `dir`: inside it (a toolkit assembled from wheels, like
// /usr/local/cuda-13.0/dist-info) or beside a wheel's package folder (site-packages).
std::vector<std::string> dist_info_names(const fs::path& dir) {
    std::vector<std::string> out;
    std::vector<fs::path> places = {dir / "dist-info", dir};
    // <site-packages>/nvidia/cudnn -> <site-packages>
    if (dir.has_parent_path()) places.push_back(dir.parent_path().parent_path());
    for (const auto& place : places) {
        std::error_code ec;
        for (fs::directory_iterator it(place, ec), end; !ec && it != end; it.increment(ec)) {
            std::string n = it->path().filename().u8string();
            if (n.size() > 10 && n.compare(n.size() - 10, 10, ".dist-info") == 0)
                out.push_back(n.substr(0, n.size() - 10));
        }
    }
    return out;
}

// "nvidia_cuda_runtime-13.0.96" -> 13.0.96 for prefix "nvidia_cuda_runtime"
std::optional<Version> dist_version(const std::vector<std::string>& names, const std::string& prefix) {
    for (const auto& n : names) {
        if (n.rfind(prefix + "-", 0) != 0) continue;
        if (auto v = parse_version(n.substr(prefix.size() + 1), 1, 4)) return v;
    }
    return std::nullopt;
}

} // namespace

FolderFacts detect_folder(const fs::path& dir, platform::Os os, bool run_nvcc) {
    FolderFacts facts;
    const bool win = os == platform::Os::Windows;
    auto names = dist_info_names(dir);

    // --- toolkit ---
    fs::path nvcc = dir / "bin" / (win ? "nvcc.exe" : "nvcc");
    bool has_cuda_h = is_file(dir / "include" / "cuda.h");
    bool has_version_file = is_file(dir / "version.json") || is_file(dir / "version.txt");
    if (is_file(nvcc) || has_cuda_h || has_version_file) {
        ToolkitFacts t;
        if (auto j = platform::read_file(dir / "version.json")) {
            t.release = toolkit_version_from_version_json(*j);
            t.cudart = component_version_from_version_json(*j, "cuda_cudart");
            if (t.release) t.evidence = (dir / "version.json").u8string();
        }
        if (!t.release) {
            if (auto txt = platform::read_file(dir / "version.txt")) {
                t.release = toolkit_version_from_version_txt(*txt);
                if (t.release) t.evidence = (dir / "version.txt").u8string();
            }
        }
        if (auto h = platform::read_file(dir / "include" / "cuda.h")) t.cuda_h = toolkit_version_from_cuda_h(*h);
        if (!t.cudart) t.cudart = dist_version(names, "nvidia_cuda_runtime");
        if (!t.cudart) {
            // nvidia_cuda_runtime_cu12-12.4.127 (older wheel names carry the CUDA major)
            for (const auto& n : names)
                if (n.rfind("nvidia_cuda_runtime_cu", 0) == 0) {
                    size_t dash = n.find('-');
                    if (dash != std::string::npos) t.cudart = parse_version(n.substr(dash + 1), 1, 4);
                }
        }
        if (!t.cudart && !win) {
            // A toolkit from Debian/RPM packages has no version.json, but its runtime's file name
            // carries the cudart version: lib64/libcudart.so.13.0.96.
            for (const char* sub : {"lib64", "lib"}) {
                std::error_code ec;
                for (fs::directory_iterator it(dir / sub, ec), end; !ec && it != end && !t.cudart;
                     it.increment(ec)) {
                    std::string n = it->path().filename().u8string();
                    const std::string prefix = "libcudart.so.";
                    if (n.rfind(prefix, 0) != 0) continue;
                    auto v = parse_version(n.substr(prefix.size()), 3, 3);
                    if (v) t.cudart = v;
                }
                if (t.cudart) break;
            }
        }
        t.nvcc = dist_version(names, "nvidia_cuda_nvcc");
        if (!t.nvcc && run_nvcc && !t.release && is_file(nvcc))
            if (auto out = platform::capture_output(nvcc, {nvcc.u8string(), "--version"}))
                t.nvcc = nvcc_version_from_output(*out);
        if (is_dir(dir / "include")) t.include_dirs.push_back("include");
        if (win) {
            if (is_dir(dir / "lib" / "x64")) t.lib_dirs.push_back("lib/x64");
        } else if (is_dir(dir / "lib64")) {
            t.lib_dirs.push_back("lib64");
        } else if (is_dir(dir / "lib")) {
            t.lib_dirs.push_back("lib");
        }
        if (is_dir(dir / "bin")) t.bin_dirs.push_back("bin");
        if (t.release || t.cuda_h || t.nvcc || t.cudart) facts.toolkit = t;
    }

    // --- cuDNN ---
    std::optional<Version> header;
    std::string evidence;
    for (const char* h : {"cudnn_version.h", "cudnn.h"}) {
        if (auto text = platform::read_file(dir / "include" / h)) {
            header = cudnn_version_from_header(*text);
            if (header) {
                evidence = (dir / "include" / h).u8string();
                break;
            }
        }
    }
    bool has_lib = any_file_starting(dir / "lib", win ? "cudnn" : "libcudnn") ||
                   any_file_starting(dir / "lib64", "libcudnn") ||
                   any_file_starting(dir / "bin", "cudnn") ||
                   any_file_starting(dir / "lib" / "x64", "cudnn");
    if (header && has_lib) {
        CudnnFacts c;
        c.version = *header;
        c.evidence = evidence;
        // The build number and CUDA variant come from names only.
        std::optional<CudnnNameInfo> named = cudnn_info_from_name(dir.filename().u8string());
        if (!named)
            for (const auto& n : names)
                if ((named = cudnn_info_from_name(n))) break;
        if (named && named->version.parts.size() >= 3 &&
            Version{{named->version.parts[0], named->version.parts[1], named->version.parts[2]}} ==
                *header) {
            c.version = named->version;
            c.cuda = named->cuda;
        }
        if (is_dir(dir / "include")) c.include_dirs.push_back("include");
        if (win) {
            if (is_dir(dir / "bin")) c.bin_dirs.push_back("bin");
            if (is_dir(dir / "lib" / "x64")) c.lib_dirs.push_back("lib/x64");
            else if (is_dir(dir / "lib")) c.lib_dirs.push_back("lib");
        } else {
            if (any_file_starting(dir / "lib", "libcudnn")) c.lib_dirs.push_back("lib");
            else if (any_file_starting(dir / "lib64", "libcudnn")) c.lib_dirs.push_back("lib64");
        }
        facts.cudnn = c;
    }
    return facts;
}

std::vector<DpkgPackage> installed_dpkg_packages(std::string_view text) {
    std::vector<DpkgPackage> out;
    std::string package, status, version, source, arch;
    auto flush = [&] {
        if (status.size() >= 9 && status.compare(status.size() - 9, 9, "installed") == 0 &&
            !package.empty()) {
            // "Source: nvidia-cuda-toolkit (11.8.0-5~deb12u1)": the name alone.
            std::string src = source.substr(0, source.find(' '));
            out.push_back({package, version, src.empty() ? package : src, arch});
        }
        package.clear();
        status.clear();
        version.clear();
        source.clear();
        arch.clear();
    };
    while (!text.empty()) {
        size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) {
            flush();
            continue;
        }
        auto field = [&](std::string_view key, std::string& into) {
            if (line.size() > key.size() && line.compare(0, key.size(), key) == 0) {
                std::string_view v = line.substr(key.size());
                while (!v.empty() && v.front() == ' ')
                    v.remove_prefix(1);
                into = std::string(v);
            }
        };
        field("Package:", package);
        field("Status:", status);
        field("Version:", version);
        field("Source:", source);
        field("Architecture:", arch);
    }
    flush();
    return out;
}

std::optional<Version> conda_meta_cuda(std::string_view text) {
    static const Pattern dep(R"re("(cuda-version|cudatoolkit) >=([0-9]+(\.[0-9]+)?))re");
    auto m = dep.search(text);
    if (!m) return std::nullopt;
    return parse_version((*m)[2], 1, 2);
}

} // namespace cvm
