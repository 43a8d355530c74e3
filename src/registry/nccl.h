#pragma once
// What cvm knows of NCCL's releases (registry/nccl.toml): the CUDA builds of each and the archives
// NVIDIA publishes for them in <base>/redist/nccl/<folder>/ (no manifest), with their SHA-256
// where a public source gives one. Loading does I/O; every lookup is pure.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/spec.h"

namespace cvm::registry {

struct NcclArchive {
    std::string name;   // "nccl_2.21.5-1+cuda12.4_x86_64.txz"
    std::string sha256; // lower-case hex; empty when no public source gives it
};

struct NcclBuild {
    Version cuda;             // 12.4
    NcclArchive linux_x86_64; // name empty: not known
    NcclArchive linux_sbsa;
    std::string sha256_source;
    // The archive for an NVIDIA platform name ("linux-x86_64", "linux-sbsa"); null when none.
    const NcclArchive* archive_for(std::string_view platform) const;
};

struct NcclRelease {
    Version version;    // 2.21.5
    std::string folder; // "v2.21.5"
    std::string source;
    std::vector<NcclBuild> builds; // oldest CUDA first
};

// registry/nccl.toml beside cuda.toml, else the copy compiled in; releases oldest first. Throws
// RegistryError naming the file and line of the first problem.
std::vector<NcclRelease> load_nccl_releases();
std::vector<NcclRelease> parse_nccl_releases(const std::string& text, const std::string& origin);

// The newest release whose version starts with `prefix`; null when none.
const NcclRelease* find_nccl_release(const std::vector<NcclRelease>& releases,
                                     const Version& prefix);

// The build of `release` for `cuda` ("12", "12.4"; empty: the newest build): the same major, and
// the same minor where `cuda` has one; of several, the newest CUDA. Null when none fits.
const NcclBuild* choose_nccl_build(const NcclRelease& release, const std::optional<Version>& cuda);

// NVIDIA's name for an archive it has not been seen under: nccl_<v>-1+cuda<M.m>_<arch>.txz.
std::string conventional_nccl_archive(const Version& version, const Version& cuda,
                                      std::string_view platform);

} // namespace cvm::registry
