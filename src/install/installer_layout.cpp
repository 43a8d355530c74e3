#include "install/installer_layout.h"

#include <nlohmann/json.hpp>

#include <vector>

#include "text/affixes.h"
#include "text/pattern.h"

namespace cvm::install {

namespace {

std::vector<std::string> split_path(const std::string& path) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        auto slash = path.find('/', start);
        parts.push_back(path.substr(start, slash - start));
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    return parts;
}

std::string join_from(const std::vector<std::string>& parts, std::size_t first) {
    std::string out;
    for (std::size_t i = first; i < parts.size(); ++i)
        out += (out.empty() ? "" : "/") + parts[i];
    return out;
}

// A component folder of the toolkit (cuda_nvcc, libcublas), not documentation or samples.
bool toolkit_component(const std::string& name) {
    if (name == "cuda_documentation" || name == "cuda_samples" || name == "cuda_demo_suite")
        return false;
    return starts_with(name, "cuda_") || starts_with(name, "lib");
}

// Tools of the merged 10.x tree that are IDEs and profilers' GUIs, not the toolkit.
bool merged_tree_extra(const std::vector<std::string>& parts) {
    static const char* const kSkipTop[] = {"doc",     "samples",          "jre",   "libnsight",
                                           "libnvvp", "nsightee_plugins", "tools", "src"};
    const std::string& top = parts[0];
    for (const char* skip : kSkipTop)
        if (top == skip) return true;
    if (starts_with(top, "nsight") || starts_with(top, "Nsight")) return true;
    if (top == "bin" && parts.size() > 1)
        for (const char* gui : {"nsight", "nvvp", "nsys", "ncu", "nv-nsight"})
            if (starts_with(parts[1], gui)) return true;
    return false;
}

// A component's own tree (below builds/<component>/ or <component>/<part>/) in the redist
// layout: lib64/ is lib/, targets/<arch>/include and lib are include/ and lib/, and the
// include/ and lib64/ links into targets/ are dropped.
std::optional<std::string> redist_path(const std::vector<std::string>& rest, bool is_symlink) {
    if (rest.empty() || rest[0].empty()) return std::nullopt;
    if (rest.size() == 1 && is_symlink &&
        (rest[0] == "include" || rest[0] == "lib64" || rest[0] == "lib"))
        return std::nullopt;
    if (rest[0] == "lib64") {
        if (rest.size() == 1) return std::string("lib");
        return "lib/" + join_from(rest, 1);
    }
    if (rest[0] == "targets") {
        if (rest.size() < 3) return std::nullopt;
        if (rest[2] == "include" || rest[2] == "lib" || rest[2] == "lib64") {
            std::string top = rest[2] == "include" ? "include" : "lib";
            return rest.size() == 3 ? top : top + "/" + join_from(rest, 3);
        }
        return std::nullopt;
    }
    return join_from(rest, 0);
}

} // namespace

std::optional<InstallerName> parse_installer_name(const std::string& file_name) {
    static const Pattern pattern(
        R"(cuda_(\d+\.\d+(?:\.\d+)?)(?:_(\d+(?:\.\d+)*))?_(linux|win10|windows)(?:_(x86_64|sbsa|ppc64le))?(_network)?\.(run|exe))",
        true);
    auto m = pattern.match(file_name);
    if (!m) return std::nullopt;
    InstallerName name;
    name.version = (*m)[1];
    name.driver = (*m)[2];
    std::string os = (*m)[3], arch = (*m)[4];
    bool windows = os != "linux";
    if (((*m)[6] == "exe") != windows) return std::nullopt;
    if (windows)
        name.platform = arch.empty() || arch == "x86_64" ? "windows-x86_64" : "";
    else
        name.platform = "linux-" + (arch.empty() ? std::string("x86_64") : arch);
    if (name.platform.empty()) return std::nullopt;
    name.network = m->matched(5);
    return name;
}

bool installer_path_wanted(InstallerFamily family, const std::string& path) {
    auto parts = split_path(path);
    if (family == InstallerFamily::LinuxRunfile) {
        if (parts[0] != "builds") return false;
        if (parts.size() == 1) return true;
        if (parts.size() == 2)
            return parts[1] == "version.json" || parts[1] == "cuda-toolkit" ||
                   parts[1] == "cublas" || toolkit_component(parts[1]);
        return place_installer_path(family, path, false).has_value();
    }
    if (parts.size() == 1) return parts[0] == "version.json" || toolkit_component(parts[0]);
    if (parts.size() == 2) return toolkit_component(parts[0]);
    return place_installer_path(family, path, false).has_value();
}

std::optional<PlacedPath> place_installer_path(InstallerFamily family, const std::string& path,
                                               bool is_symlink) {
    auto parts = split_path(path);
    if (family == InstallerFamily::LinuxRunfile) {
        if (parts.size() < 3 || parts[0] != "builds") return std::nullopt;
        const std::string& component = parts[1];
        std::vector<std::string> rest(parts.begin() + 2, parts.end());
        if (component == "cuda-toolkit" || component == "cublas") {
            if (merged_tree_extra(rest)) return std::nullopt;
            auto placed = redist_path(rest, is_symlink);
            if (!placed) return std::nullopt;
            // cuBLAS's own top-level files would clash with the toolkit's.
            if (component == "cublas" && rest.size() == 1) return std::nullopt;
            return PlacedPath{"cuda-toolkit", *placed};
        }
        if (!toolkit_component(component)) return std::nullopt;
        auto placed = redist_path(rest, is_symlink);
        if (!placed) return std::nullopt;
        return PlacedPath{component, *placed};
    }
    // Windows: <component>/<part>/<tree>; files beside the parts are the installer's.
    if (parts.size() < 3 || !toolkit_component(parts[0])) return std::nullopt;
    const std::string& leaf = parts.back();
    if (leaf.size() > 4 && leaf.compare(leaf.size() - 4, 4, ".nvi") == 0) return std::nullopt;
    std::vector<std::string> rest(parts.begin() + 2, parts.end());
    auto placed = redist_path(rest, is_symlink);
    if (!placed) return std::nullopt;
    return PlacedPath{parts[0], *placed};
}

std::string installer_toolkit_version(const std::string& text) {
    auto json = nlohmann::json::parse(text, nullptr, false);
    if (!json.is_discarded()) {
        if (json.is_object() && json.contains("cuda") && json["cuda"].is_object() &&
            json["cuda"].contains("version") && json["cuda"]["version"].is_string())
            return json["cuda"]["version"].get<std::string>();
        return {};
    }
    static const Pattern version_txt(R"(CUDA Version (\d+\.\d+\.\d+))");
    if (auto m = version_txt.search(text)) return (*m)[1];
    return {};
}

} // namespace cvm::install
