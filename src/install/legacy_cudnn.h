#pragma once
// cuDNN releases from before NVIDIA's redistributable manifests ("legacy"): which archive of a
// release fits a CUDA and a platform, where NVIDIA's public folder keeps it, and the checksum a
// public source gives for it (registry/cudnn_archives.toml). Pure, except loading that table.
#include <cstdint>
#include <map>
#include <string>

namespace cvm::registry {
struct CudnnRelease;
struct CudnnBuild;
} // namespace cvm::registry

namespace cvm::install {

// The sum and size a public source records for one archive.
struct KnownArchiveSum {
    std::string sha256;
    std::uint64_t size = 0; // 0: no source gives it
    std::string source;
};

// registry/cudnn_archives.toml (beside cuda.toml, else the copy compiled in), by file name.
// Throws InstallError naming the file and line when it is malformed.
std::map<std::string, KnownArchiveSum> load_known_archive_sums();
// The same from TOML text; `origin` names it in messages.
std::map<std::string, KnownArchiveSum> parse_known_archive_sums(const std::string& text,
                                                                const std::string& origin);

struct LegacyArchive {
    const registry::CudnnBuild* build = nullptr;
    std::string name; // "cudnn-11.2-linux-x64-v8.1.0.77.tgz"
    std::string path; // below the mirror: "redist/cudnn/v8.1.0/cudnn-11.2-linux-x64-v8.1.0.77.tgz"
};

// Where NVIDIA's public folder keeps archive `name` of release `version` (8.1.0.77), below the
// base: redist/cudnn/v8.1.0/<name>; the 8.3 archives named like redist ones
// (cudnn-linux-x86_64-8.3.3.40_cuda11.5-archive.tar.xz) lie in local_installers/<cuda>/.
std::string legacy_archive_path(const std::string& version, const std::string& name);

// The archive of `release` for `cuda` ("11.2", "11"; empty: the release's only build) on
// `host` ("linux-x86_64", "windows-x86_64"). Several builds fit: the newest CUDA variant.
// Throws InstallError (input) listing the builds there are when none fits.
LegacyArchive choose_legacy_archive(const registry::CudnnRelease& release, const std::string& cuda,
                                    const std::string& host);

} // namespace cvm::install
