#pragma once
// NVIDIA's redistributable manifests (redistrib_<version>.json) for CUDA and cuDNN.
// A manifest maps component keys ("cuda_nvcc", "cudnn") to a version and, per platform
// ("linux-x86_64", "windows-x86_64", ...), the archive to fetch. cuDNN manifests add a level:
// each platform maps a CUDA variant ("cuda11", "cuda12") to the archive.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cvm::install {

struct Artifact {
    std::string relative_path; // below <base>/<product>/redist/
    std::string sha256;        // lower-case hex, 64 digits
    std::string md5;           // may be empty
    std::uint64_t size = 0;    // bytes (the manifest writes it as a string)
};

struct ManifestComponent {
    std::string key;  // "cuda_nvcc"
    std::string name; // "CUDA NVCC"
    std::string license;
    std::string version;                    // "11.8.89"
    std::vector<std::string> cuda_variants; // cuDNN only: "11", "12"
    // platform -> variant -> artifact. The variant is "" when the manifest has no variant level,
    // else as written under the platform ("cuda11").
    std::map<std::string, std::map<std::string, Artifact>> platforms;

    bool available_on(const std::string& platform) const { return platforms.count(platform) != 0; }
};

struct Manifest {
    std::string release_date;
    std::string release_label;
    std::string release_product;
    std::map<std::string, ManifestComponent> components;

    const ManifestComponent* find(const std::string& key) const;
    // Component keys that have an archive for `platform`, sorted.
    std::vector<std::string> keys_for_platform(const std::string& platform) const;
};

// Parses a manifest. `origin` (file name or URL) is used in error messages. Throws InstallError
// (input) on malformed JSON or entries.
Manifest parse_manifest(std::string_view json_text, const std::string& origin);

// The platform names NVIDIA uses; the host's one (e.g. "linux-x86_64"), empty when the host
// has none (an architecture NVIDIA does not build for).
std::string host_redist_platform();
bool is_known_redist_platform(const std::string& platform);

// Picks the archive of `component` for `platform`. For a component with CUDA variants,
// `cuda` ("12", "11.8") selects the variant: an exact "cuda<cuda>" key first, else the
// variant of the same major. Throws InstallError (input) naming what exists when nothing fits.
const Artifact& select_artifact(const ManifestComponent& component, const std::string& platform,
                                const std::string& cuda = "");
// The variant key select_artifact would use ("" for components without variants).
std::string select_variant(const ManifestComponent& component, const std::string& platform,
                           const std::string& cuda);

// The components a developer wants from a toolkit manifest, those present for `platform`:
// the compiler and what it needs, runtime and headers, and the math libraries.
std::vector<std::string> default_toolkit_components(const Manifest& manifest,
                                                    const std::string& platform);

// Validates a user's --components list (comma-separated or already split; "default" expands
// to the default set) against the manifest for `platform`. Throws InstallError (input) naming
// the unknown or unavailable component and listing those that exist.
std::vector<std::string> resolve_components(const Manifest& manifest, const std::string& platform,
                                            const std::vector<std::string>& requested);

// Splits "a,b , c" into {"a","b","c"}, dropping empties.
std::vector<std::string> split_component_list(const std::string& text);

} // namespace cvm::install
