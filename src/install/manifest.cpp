#include "install/manifest.h"

#include "install/error.h"
#include "platform/platform.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <set>

namespace cvm::install {

namespace {

using json = nlohmann::json;

const char* const kPlatforms[] = {"linux-x86_64",  "linux-sbsa",     "linux-aarch64",
                                  "linux-ppc64le", "windows-x86_64", "windows-arm64"};

bool is_hex(const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}

std::string lower(std::string s) {
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string string_field(const json& object, const char* field, const std::string& where,
                         bool required) {
    auto it = object.find(field);
    if (it == object.end()) {
        if (required) fail_input(where + ": missing \"" + field + "\"");
        return {};
    }
    if (!it->is_string()) fail_input(where + ": \"" + field + "\" is not a string");
    return it->get<std::string>();
}

bool looks_like_artifact(const json& value) {
    return value.is_object() && value.contains("relative_path");
}

Artifact parse_artifact(const json& object, const std::string& where) {
    Artifact artifact;
    artifact.relative_path = string_field(object, "relative_path", where, true);
    if (artifact.relative_path.empty()) fail_input(where + ": empty relative_path");
    // The path is appended to a base URL and names the download: keep it a plain relative path.
    if (artifact.relative_path.front() == '/' ||
        artifact.relative_path.find("..") != std::string::npos ||
        artifact.relative_path.find('\\') != std::string::npos ||
        artifact.relative_path.find("://") != std::string::npos)
        fail_input(where + ": relative_path \"" + artifact.relative_path +
                   "\" is not a plain relative path");
    for (unsigned char c : artifact.relative_path)
        if (c < 0x20 || c == 0x7f || c == ' ' || c == '"' || c == '?' || c == '#')
            fail_input(where + ": relative_path \"" + artifact.relative_path +
                       "\" has characters a URL path cannot hold");
    artifact.sha256 = lower(string_field(object, "sha256", where, true));
    if (artifact.sha256.size() != 64 || !is_hex(artifact.sha256))
        fail_input(where + ": sha256 \"" + artifact.sha256 + "\" is not 64 hex digits");
    artifact.md5 = lower(string_field(object, "md5", where, false));
    auto size = object.find("size");
    if (size != object.end()) {
        // NVIDIA writes the size as a string; accept a number too.
        if (size->is_number_unsigned()) {
            artifact.size = size->get<std::uint64_t>();
        } else if (size->is_string()) {
            const std::string& text = size->get_ref<const std::string&>();
            if (text.empty() || text.size() > 19 ||
                !std::all_of(text.begin(), text.end(),
                             [](unsigned char c) { return c >= '0' && c <= '9'; }))
                fail_input(where + ": size \"" + text + "\" is not a number of bytes");
            artifact.size = std::stoull(text);
        } else {
            fail_input(where + ": size is neither a string nor a number");
        }
    }
    return artifact;
}

std::string join(const std::vector<std::string>& items, const char* sep = ", ") {
    std::string out;
    for (const auto& item : items) {
        if (!out.empty()) out += sep;
        out += item;
    }
    return out;
}

// "cuda12" / "cuda11.8" -> (12, -1) / (11, 8); nullopt for anything else.
std::optional<std::pair<int, int>> parse_variant(const std::string& variant) {
    std::string digits = variant.rfind("cuda", 0) == 0 ? variant.substr(4) : variant;
    if (digits.empty() || digits.size() > 8) return std::nullopt;
    int major = 0, minor = -1;
    std::size_t i = 0;
    auto number = [&](int& out) {
        if (i >= digits.size() || !std::isdigit(static_cast<unsigned char>(digits[i])))
            return false;
        out = 0;
        while (i < digits.size() && std::isdigit(static_cast<unsigned char>(digits[i])))
            out = out * 10 + (digits[i++] - '0');
        return true;
    };
    if (!number(major)) return std::nullopt;
    if (i < digits.size()) {
        if (digits[i] != '.') return std::nullopt;
        ++i;
        if (!number(minor)) return std::nullopt;
        // Anything after the minor ("cuda11.8.0") is ignored for matching.
        if (i < digits.size() && digits[i] != '.') return std::nullopt;
    }
    return std::make_pair(major, minor);
}

} // namespace

const ManifestComponent* Manifest::find(const std::string& key) const {
    auto it = components.find(key);
    return it == components.end() ? nullptr : &it->second;
}

std::vector<std::string> Manifest::keys_for_platform(const std::string& platform) const {
    std::vector<std::string> keys;
    for (const auto& [key, component] : components)
        if (component.available_on(platform)) keys.push_back(key);
    return keys;
}

Manifest parse_manifest(std::string_view json_text, const std::string& origin) {
    json document = json::parse(json_text.begin(), json_text.end(), nullptr, false);
    if (document.is_discarded())
        fail_input("manifest " + origin + " is not valid JSON; fetch it again or check the mirror");
    if (!document.is_object()) fail_input("manifest " + origin + " is not a JSON object");
    Manifest manifest;
    for (auto it = document.begin(); it != document.end(); ++it) {
        const std::string& key = it.key();
        const json& value = it.value();
        if (!value.is_object()) {
            if (value.is_string()) {
                if (key == "release_date")
                    manifest.release_date = value.get<std::string>();
                else if (key == "release_label")
                    manifest.release_label = value.get<std::string>();
                else if (key == "release_product")
                    manifest.release_product = value.get<std::string>();
            }
            continue; // other scalar keys carry no archives
        }
        std::string where = "manifest " + origin + ": component " + key;
        ManifestComponent component;
        component.key = key;
        component.name = string_field(value, "name", where, false);
        component.license = string_field(value, "license", where, false);
        component.version = string_field(value, "version", where, false);
        if (auto variants = value.find("cuda_variant"); variants != value.end()) {
            if (!variants->is_array()) fail_input(where + ": cuda_variant is not a list");
            for (const auto& v : *variants) {
                if (!v.is_string()) fail_input(where + ": cuda_variant holds a non-string");
                component.cuda_variants.push_back(v.get<std::string>());
            }
        }
        for (auto p = value.begin(); p != value.end(); ++p) {
            if (!p.value().is_object()) continue;
            std::string pwhere = where + " platform " + p.key();
            if (looks_like_artifact(p.value())) {
                component.platforms[p.key()][""] = parse_artifact(p.value(), pwhere);
                continue;
            }
            // A variant level ("cuda11": {...}); objects of another shape are ignored.
            std::map<std::string, Artifact> variants;
            for (auto v = p.value().begin(); v != p.value().end(); ++v)
                if (looks_like_artifact(v.value()))
                    variants[v.key()] = parse_artifact(v.value(), pwhere + " variant " + v.key());
            if (!variants.empty()) component.platforms[p.key()] = std::move(variants);
        }
        if (component.platforms.empty()) continue; // e.g. a nested object that is not a component
        if (component.version.empty()) fail_input(where + ": missing \"version\"");
        manifest.components.emplace(key, std::move(component));
    }
    if (manifest.components.empty())
        fail_input("manifest " + origin + " lists no archives; is it a redistrib_*.json file?");
    return manifest;
}

std::string host_redist_platform() {
    const bool windows = platform::host_os() == platform::Os::Windows;
#if defined(__x86_64__) || defined(_M_X64)
    return windows ? "windows-x86_64" : "linux-x86_64";
#elif defined(__aarch64__) || defined(_M_ARM64)
    // NVIDIA builds "sbsa" for ARM servers; "aarch64" archives are for Jetson (L4T).
    return windows ? "windows-arm64" : "linux-sbsa";
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
    return windows ? "" : "linux-ppc64le";
#else
    return "";
#endif
}

bool is_known_redist_platform(const std::string& platform) {
    return std::find(std::begin(kPlatforms), std::end(kPlatforms), platform) !=
           std::end(kPlatforms);
}

std::string select_variant(const ManifestComponent& component, const std::string& platform,
                           const std::string& cuda) {
    auto p = component.platforms.find(platform);
    if (p == component.platforms.end()) {
        std::vector<std::string> have;
        for (const auto& [name, _] : component.platforms)
            have.push_back(name);
        fail_input(component.key + " " + component.version + " has no archive for " + platform +
                   " (available: " + join(have) + ")");
    }
    const auto& variants = p->second;
    if (variants.size() == 1 && variants.begin()->first.empty()) return ""; // no variant level
    std::vector<std::string> have;
    for (const auto& [name, _] : variants)
        have.push_back(name);
    if (cuda.empty())
        fail_input(component.key + " " + component.version + " is built per CUDA version (" +
                   join(have) + "); choose one with --cuda");
    auto wanted = parse_variant(cuda);
    if (!wanted) fail_input("--cuda \"" + cuda + "\" is not a CUDA version like 12 or 11.8");
    if (variants.count("cuda" + cuda)) return "cuda" + cuda;
    std::string best;
    int best_minor = -2;
    for (const auto& [name, _] : variants) {
        auto v = parse_variant(name);
        if (!v || v->first != wanted->first) continue;
        // A per-major variant fits any minor; a per-minor one only its own.
        if (v->second >= 0 && wanted->second >= 0 && v->second != wanted->second) continue;
        if (v->second > best_minor) {
            best_minor = v->second;
            best = name;
        }
    }
    if (best.empty())
        fail_input(component.key + " " + component.version + " has no build for CUDA " + cuda +
                   " on " + platform + " (available: " + join(have) + ")");
    return best;
}

const Artifact& select_artifact(const ManifestComponent& component, const std::string& platform,
                                const std::string& cuda) {
    std::string variant = select_variant(component, platform, cuda);
    return component.platforms.at(platform).at(variant);
}

std::vector<std::string> default_toolkit_components(const Manifest& manifest,
                                                    const std::string& platform) {
    // The compiler with what it needs (crt and nvvm were split out of nvcc in 12.8/13.0),
    // runtime and headers, profiling hooks, and the math libraries.
    static const char* const kDefault[] = {
        "cuda_nvcc",         "cuda_crt",     "libnvvm",      "cuda_nvvm",     "cuda_cudart",
        "cuda_cccl",         "cccl",         "cuda_culibos", "cuda_cuxxfilt", "cuda_cuobjdump",
        "cuda_nvdisasm",     "cuda_nvrtc",   "cuda_nvtx",    "cuda_nvml_dev", "cuda_cupti",
        "cuda_profiler_api", "libnvjitlink", "libcublas",    "libcufft",      "libcurand",
        "libcusolver",       "libcusparse"};
    std::vector<std::string> keys;
    for (const char* key : kDefault) {
        const ManifestComponent* component = manifest.find(key);
        if (component != nullptr && component->available_on(platform)) keys.emplace_back(key);
    }
    return keys;
}

std::vector<std::string> split_component_list(const std::string& text) {
    std::vector<std::string> out;
    std::string current;
    auto flush = [&] {
        auto b = current.find_first_not_of(" \t");
        auto e = current.find_last_not_of(" \t");
        if (b != std::string::npos) out.push_back(current.substr(b, e - b + 1));
        current.clear();
    };
    for (char c : text) {
        if (c == ',')
            flush();
        else
            current.push_back(c);
    }
    flush();
    return out;
}

std::vector<std::string> resolve_components(const Manifest& manifest, const std::string& platform,
                                            const std::vector<std::string>& requested) {
    std::vector<std::string> items;
    for (const auto& r : requested)
        for (auto& piece : split_component_list(r))
            items.push_back(std::move(piece));
    if (items.empty()) return default_toolkit_components(manifest, platform);
    std::vector<std::string> out;
    std::set<std::string> seen;
    auto add = [&](const std::string& key) {
        if (seen.insert(key).second) out.push_back(key);
    };
    for (const auto& item : items) {
        if (item == "default") {
            for (const auto& key : default_toolkit_components(manifest, platform))
                add(key);
            continue;
        }
        const ManifestComponent* component = manifest.find(item);
        if (component == nullptr)
            fail_input("unknown component \"" + item +
                       "\"; this release has: " + join(manifest.keys_for_platform(platform)));
        if (!component->available_on(platform))
            fail_input("component \"" + item + "\" has no archive for " + platform +
                       "; available there: " + join(manifest.keys_for_platform(platform)));
        add(item);
    }
    return out;
}

} // namespace cvm::install
