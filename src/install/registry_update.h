#pragma once
// `cvm update`: reads the mirror's folder listings (<base>/cuda/redist/, <base>/cudnn/redist/ and
// the legacy <base>/redist/cudnn/ with its vX.Y.Z/ folders), fetches the manifest (or legacy
// folder listing) of each release the registry lacks, newest first and at most
// `max_fetches` per run, and writes what they say to the registry overlay
// (registry/overlay.h) in one atomic rename. What no manifest says is inferred from the
// registry's neighbouring rows and marked so (minimum drivers, the CUDA range of cuDNN builds).
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "install/download.h"

namespace cvm::registry {
struct Registry;
}

namespace cvm::install {

struct UpdateOptions {
    std::string mirror; // base URL, no trailing slash (default_mirror())
    DownloadOptions download = DownloadOptions::from_environment();
    unsigned max_fetches = 20;       // manifests and legacy folders fetched per run
    std::uint64_t max_listing = 4 << 20;   // bytes of one listing
    std::uint64_t max_manifest = 16 << 20; // bytes of one manifest
    std::filesystem::path cache_dir;       // $CVM_ROOT/cache
    std::chrono::system_clock::time_point now = std::chrono::system_clock::now();
};

struct UpdateReport {
    std::filesystem::path file;      // the overlay written
    std::vector<std::string> added;  // "CUDA 13.4.1", "cuDNN 9.25.0.10"
    std::size_t releases = 0;        // releases the overlay holds now
    std::size_t left = 0;            // new releases left for the next run (max_fetches)
    std::vector<std::string> problems; // one line each: a listing or manifest that was refused
};

// Throws InstallError (code "network") when the first listing cannot be fetched at all: the
// mirror is unreachable, and nothing is written. Other failures are reported in `problems`,
// and what could be read is still written.
UpdateReport update_registry(const registry::Registry& shipped, const UpdateOptions& options);

} // namespace cvm::install
