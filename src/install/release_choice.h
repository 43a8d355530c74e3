#pragma once
// Which release an install names, decided from the registry before anything is downloaded: a
// partial version means the newest release cvm can fetch, and a release cvm cannot fetch (or a
// build that does not exist) is refused at once with what to do instead (InstallError).
#include <optional>
#include <string>
#include <utility>

#include "spec/spec.h"

namespace cvm::registry {
struct Registry;
}

namespace cvm::install {

struct ToolkitChoice {
    Version version;
    std::string manifest;  // "redistrib_12.4.1.json"; empty for a release before the manifests
    std::string installer; // else NVIDIA's local installer for the host ("cuda_11.2.2_460.32.03_linux.run")
    std::string installer_sha256; // its SHA-256 where the registry has one
    std::string installer_source; // where the registry has the name and sum from
};

// The toolkit `requested` (1 to 3 numbers) names for `host` ("linux-x86_64", "windows-x86_64"):
// the newest release cvm can fetch, by manifest or (before 11.4.0) by NVIDIA's local installer.
// Without a registry, or for a version it does not know, the version as given (3 numbers
// needed) and the manifest named after it.
ToolkitChoice choose_toolkit(const registry::Registry* reg, const Version& requested,
                             const std::string& host = "linux-x86_64");

// The manifest of cuDNN `requested` (1 to 4 numbers) for `cuda` ("12", "11.8"; empty: not
// given) on `host` ("linux-x86_64"). Without a registry, or for a version it does not know,
// the manifest named after the version (3 numbers needed).
std::string choose_cudnn_manifest(const registry::Registry* reg, const Version& requested,
                                  const std::string& cuda, const std::string& host);

// The cuDNN release (version) and variant (the CUDA it was built for) that `spec.cudnn` names
// for the toolkit `toolkit`: the newest that has a build for it (from a manifest, or a legacy
// archive). nullopt when there is no registry or it knows no cuDNN release with that prefix;
// refused (listing the builds that fit) when none of that prefix fits the toolkit.
std::optional<std::pair<std::string, std::string>>
choose_cudnn_for(const registry::Registry* reg, const Spec& spec, const Version& toolkit,
                 const std::string& host);

// "builds that do: 8.9.7.29-cuda11, ..." (the newest few cuDNN builds supporting `toolkit`, of
// the major of `wanted` where it has any), for messages that refuse a cuDNN the toolkit cannot use.
std::string cudnn_builds_fitting(const registry::Registry& reg, const Version& toolkit,
                                 const Version& wanted);

} // namespace cvm::install
