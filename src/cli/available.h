#pragma once
// What the release registry knows and how cvm gets each release: `cvm list --available` and
// `cvm latest` (both offline: everything comes from the registry data shipped with cvm).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/spec.h"
#include "store/store.h"
#include "registry/nccl.h"
#include "registry/overlay.h"
#include "registry/registry.h"

namespace CLI {
class App;
}

namespace cvm::cli {

// `[cuda|cudnn|nccl] [PREFIX]` of list and latest. KIND may be left out before a PREFIX
// (`cvm list --available 11`).
struct ReleaseFilter {
    std::string kind;   // "", "cuda", "cudnn" or "nccl"
    std::string prefix; // as typed; checked by release_prefix()
};
void add_release_filter(CLI::App* cmd, const std::shared_ptr<ReleaseFilter>& filter);
// The PREFIX as a version (1 to 4 numbers), nullopt when none was given; the KIND moved to
// PREFIX when it was one. Throws UsageError naming `command` for a bad PREFIX.
std::optional<Version> release_prefix(ReleaseFilter& filter, const std::string& command);

// The shipped registry with the `cvm update` overlay (release_registry.h); `overlay` says what
// the overlay was. Throws Failure when the shipped registry cannot be read.
registry::Registry load_registry_or_fail(registry::OverlayState* overlay = nullptr);

// One release as cvm can get it. For cuDNN, one row per build (id 8.1.0.77-cuda11.2).
struct KnownRelease {
    Kind kind = Kind::Cuda;
    std::string id;
    Version version; // the toolkit's, or the cuDNN release's
    std::string date; // as the registry has it
    std::string manifest;
    registry::Fetch how = registry::Fetch::Manifest;
    bool installed = false;
    bool installable = true; // `cvm install` fetches it (a toolkit before the manifests: when cvm
                             // knows NVIDIA's installer of it for this platform)
    const registry::CudaRelease* cuda = nullptr;  // for toolkits
    const registry::CudnnBuild* build = nullptr;  // for cuDNN builds
    const registry::NcclBuild* nccl = nullptr;    // for NCCL builds
};

// The releases of `kind`, newest first, whose version starts with `prefix`. For cuDNN with
// `prefix_is_cuda`, the prefix is a CUDA version instead, and the builds kept are those that
// support a CUDA with that prefix.
std::vector<KnownRelease> known_releases(const registry::Registry& reg, const Store& store, Kind kind,
                                         const std::optional<Version>& prefix, bool prefix_is_cuda = false);

// "2021-03" for "2021-03" and "2021-03-15": one format, the month (all the registry knows of most).
std::string release_month(const std::string& date);
// The same for JSON: null when the registry has no date.
nlohmann::json released_json(const std::string& date);

} // namespace cvm::cli
