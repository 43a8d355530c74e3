#include "install/archive_name.h"

#include "spec/redist_platform.h"
#include "text/affixes.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace cvm::install {

namespace {

bool is_version(std::string_view s, int min_parts = 2) {
    if (s.empty() || s.size() > 40) return false;
    int parts = 1;
    bool digit = false;
    for (char c : s) {
        if (c == '.') {
            if (!digit) return false;
            ++parts;
            digit = false;
        } else if (std::isdigit(static_cast<unsigned char>(c))) {
            digit = true;
        } else {
            return false;
        }
    }
    return digit && parts >= min_parts;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    for (;;) {
        std::size_t end = s.find(sep, start);
        out.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
        if (end == std::string_view::npos) return out;
        start = end + 1;
    }
}

// Splits "name.tar.xz" into ("name", "tar.xz").
std::pair<std::string_view, std::string> split_extension(std::string_view name) {
    static const char* const kExtensions[] = {".tar.xz", ".txz",     ".tar.gz", ".tgz", ".tar.bz2",
                                              ".tbz2",   ".tar.zst", ".tar",    ".zip", ".whl"};
    std::string lower(name);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const char* ext : kExtensions)
        if (ends_with(lower, ext)) {
            std::size_t n = std::char_traits<char>::length(ext);
            return {name.substr(0, name.size() - n), std::string(ext + 1)};
        }
    return {name, std::string()};
}

const char* const kRedistPlatforms[] = {"linux-x86_64",  "linux-sbsa",     "linux-aarch64",
                                        "linux-ppc64le", "windows-x86_64", "windows-arm64"};

// "<product>-<platform>-<version>[_cuda<N>]-archive"
std::optional<ArchiveName> parse_redist_stem(std::string_view stem) {
    if (!ends_with(stem, "-archive")) return std::nullopt;
    stem.remove_suffix(std::string_view("-archive").size());
    for (const char* platform : kRedistPlatforms) {
        std::string needle = std::string("-") + platform + "-";
        std::size_t at = stem.find(needle);
        if (at == std::string_view::npos || at == 0) continue;
        std::string_view product = stem.substr(0, at);
        std::string_view version = stem.substr(at + needle.size());
        ArchiveName name;
        name.platform = platform;
        std::size_t variant = version.find("_cuda");
        if (variant != std::string_view::npos) {
            name.cuda_variant = std::string(version.substr(variant + 5));
            version = version.substr(0, variant);
            if (!is_version(name.cuda_variant, 1)) return std::nullopt;
        }
        if (!is_version(version)) return std::nullopt;
        for (char c : product)
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return std::nullopt;
        name.product = std::string(product);
        name.version = std::string(version);
        name.family =
            product == "cudnn" ? ArchiveFamily::CudnnRedist : ArchiveFamily::CudaComponent;
        if (name.family == ArchiveFamily::CudnnRedist && name.cuda_variant.empty())
            return std::nullopt; // cuDNN redist archives always name their CUDA
        return name;
    }
    return std::nullopt;
}

// "cudnn-<cuda>-<os>-<arch>-v<version>"
std::optional<ArchiveName> parse_legacy_stem(std::string_view stem) {
    auto parts = split(stem, '-');
    if (parts.size() != 5 || parts[0] != "cudnn" || !is_version(parts[1]) || parts[4].size() < 2 ||
        parts[4][0] != 'v' || !is_version(parts[4].substr(1)))
        return std::nullopt;
    std::string platform = normalize_platform(parts[2], parts[3]);
    if (platform.empty()) return std::nullopt;
    ArchiveName name;
    name.family = ArchiveFamily::LegacyCudnn;
    name.product = "cudnn";
    name.cuda_variant = std::string(parts[1]);
    name.version = std::string(parts[4].substr(1));
    name.platform = platform;
    return name;
}

// "nccl_<version>-<revision>+cuda<major>.<minor>_<arch>" (NVIDIA's redist/nccl folder).
std::optional<ArchiveName> parse_nccl_stem(std::string_view stem) {
    if (!starts_with(stem, "nccl_")) return std::nullopt;
    stem.remove_prefix(5);
    std::size_t dash = stem.find('-');
    std::size_t plus = stem.find("+cuda");
    std::size_t underscore = plus == std::string_view::npos ? plus : stem.find('_', plus);
    if (dash == std::string_view::npos || plus == std::string_view::npos ||
        underscore == std::string_view::npos || dash > plus)
        return std::nullopt;
    std::string_view version = stem.substr(0, dash);
    std::string_view revision = stem.substr(dash + 1, plus - dash - 1);
    std::string_view cuda = stem.substr(plus + 5, underscore - plus - 5);
    std::string_view arch = stem.substr(underscore + 1);
    if (!is_version(version, 3) || revision.empty() ||
        !std::all_of(revision.begin(), revision.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) ||
        !is_version(cuda, 1))
        return std::nullopt;
    ArchiveName name;
    name.family = ArchiveFamily::NcclArchive;
    name.product = "nccl";
    name.version = std::string(version);
    name.cuda_variant = std::string(cuda);
    name.platform = arch == "x86_64"    ? "linux-x86_64"
                    : arch == "aarch64" ? "linux-sbsa"
                    : arch == "ppc64le" ? "linux-ppc64le"
                                        : "";
    if (name.platform.empty()) return std::nullopt;
    return name;
}

// "<dist>-<version>[-<build>]-<python>-<abi>-<platform>" (PEP 427)
std::optional<ArchiveName> parse_wheel_stem(std::string_view stem) {
    auto parts = split(stem, '-');
    if (parts.size() != 5 && parts.size() != 6) return std::nullopt;
    std::string project = normalize_project_name(parts[0]);
    std::string_view version = parts[1];
    if (!is_version(version, 1)) return std::nullopt;
    std::string platform;
    for (auto tag : split(parts.back(), '.')) {
        platform = normalize_platform("", tag);
        if (!platform.empty()) break;
    }
    if (!starts_with(project, "nvidia-")) return std::nullopt;
    ArchiveName name;
    name.wheel_project = project;
    name.version = std::string(version);
    name.platform = platform;
    std::string rest = project.substr(7); // after "nvidia-"
    // "-cu12" names the CUDA major; CUDA 13 wheels drop it for toolkit parts.
    std::size_t cu = rest.rfind("-cu");
    if (cu != std::string::npos && is_version(std::string_view(rest).substr(cu + 3), 1)) {
        name.cuda_variant = rest.substr(cu + 3);
        rest = rest.substr(0, cu);
    }
    if (rest == "cudnn") {
        name.family = ArchiveFamily::CudnnWheel;
        name.product = "cudnn";
        if (name.cuda_variant.empty()) return std::nullopt;
    } else if (rest == "nccl") {
        name.family = ArchiveFamily::NcclWheel;
        name.product = "nccl";
        if (name.cuda_variant.empty()) return std::nullopt;
    } else {
        name.family = ArchiveFamily::CudaWheel;
        std::replace(rest.begin(), rest.end(), '-', '_');
        name.product = rest;
    }
    return name;
}

} // namespace

const char* family_name(ArchiveFamily family) {
    switch (family) {
    case ArchiveFamily::LegacyCudnn:
        return "legacy cuDNN archive";
    case ArchiveFamily::CudnnRedist:
        return "cuDNN redistributable archive";
    case ArchiveFamily::CudaComponent:
        return "CUDA component archive";
    case ArchiveFamily::CudnnWheel:
        return "cuDNN wheel";
    case ArchiveFamily::CudaWheel:
        return "CUDA wheel";
    case ArchiveFamily::NcclArchive:
        return "NCCL archive";
    case ArchiveFamily::NcclWheel:
        return "NCCL wheel";
    }
    return "archive";
}

std::string normalize_project_name(std::string_view name) {
    std::string out;
    bool dash = false;
    for (char c : name) {
        if (c == '-' || c == '_' || c == '.') {
            dash = true;
            continue;
        }
        if (dash && !out.empty()) out += '-';
        dash = false;
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

std::string normalize_platform(std::string_view os, std::string_view arch) {
    std::string a(arch);
    std::transform(a.begin(), a.end(), a.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (os.empty()) {
        // Wheel platform tags.
        if (a == "win_amd64") return "windows-x86_64";
        if (a == "win_arm64") return "windows-arm64";
        if (starts_with(a, "manylinux") || starts_with(a, "musllinux") ||
            starts_with(a, "linux_")) {
            if (ends_with(a, "_x86_64")) return "linux-x86_64";
            if (ends_with(a, "_aarch64")) return "linux-sbsa";
            if (ends_with(a, "_ppc64le")) return "linux-ppc64le";
        }
        return {};
    }
    std::string o(os);
    std::transform(o.begin(), o.end(), o.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    bool windows = is_windows_platform(o);
    if (!windows && o != "linux") return {};
    if (a == "x64" || a == "x86_64" || a == "amd64")
        return windows ? "windows-x86_64" : "linux-x86_64";
    if (windows) return {};
    if (a == "ppc64le") return "linux-ppc64le";
    if (a == "aarch64sbsa" || a == "sbsa") return "linux-sbsa";
    if (a == "aarch64") return "linux-aarch64";
    return {};
}

std::optional<ArchiveName> parse_archive_folder_name(std::string_view folder) {
    auto name = parse_redist_stem(folder);
    if (!name) name = parse_nccl_stem(folder);
    return name;
}

std::optional<ArchiveName> parse_archive_name(std::string_view filename) {
    auto slash = filename.find_last_of("/\\");
    if (slash != std::string_view::npos) filename.remove_prefix(slash + 1);
    auto [stem, extension] = split_extension(filename);
    if (extension.empty()) return std::nullopt;
    std::optional<ArchiveName> name;
    if (extension == "whl")
        name = parse_wheel_stem(stem);
    else if (!(name = parse_redist_stem(stem)) && !(name = parse_nccl_stem(stem)))
        name = parse_legacy_stem(stem);
    if (name) name->extension = extension;
    return name;
}

std::string basename_of_url(const std::string& url) {
    std::string path = url;
    auto q = path.find_first_of("?#");
    if (q != std::string::npos) path.resize(q);
    auto slash = path.rfind('/');
    std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    std::string clean;
    for (char c : name)
        clean += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')
                     ? c
                     : '_';
    if (clean.empty() || clean == "." || clean == "..") clean = "download";
    return clean;
}

} // namespace cvm::install
