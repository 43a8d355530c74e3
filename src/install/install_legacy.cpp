// StoreInstaller::install_legacy_cudnn: a cuDNN from before NVIDIA's manifests, from the public
// folder <mirror>/redist/cudnn/v<X.Y.Z>/. The archive is held to the SHA-256 (and size) a public
// source gives (registry/cudnn_archives.toml), else to the one recorded when it was first
// downloaded (first_use.h), else to the one a project's cvm.lock pins; with none of them, the
// first download is trusted and its sum recorded.
#include "install/error.h"
#include "install/held_download.h"
#include "install/legacy_cudnn.h"
#include "install/progress.h"
#include "install/sha256.h"
#include "install/store_install.h"
#include "install/version_lock.h"
#include "registry/registry.h"

namespace cvm::install {

namespace fs = std::filesystem;

InstallResult StoreInstaller::install_legacy_cudnn(const registry::CudnnRelease& rel,
                                                   const std::string& cuda) {
    const std::string& host = options_.host_platform;
    LegacyArchive archive = choose_legacy_archive(rel, cuda, host);
    const std::string id = CudnnId{rel.version, archive.build->cuda}.str();
    const std::string& name = archive.name;

    auto version_lock = lock_version(store_, Kind::Cudnn, id, options_.progress);
    if (auto existing = options_.reinstall ? std::nullopt : store_.find(Kind::Cudnn, id)) {
        if (options_.progress) options_.progress->message("cuDNN " + id + " is already installed");
        return {Kind::Cudnn, id, existing->path, true, {}};
    }

    // The sum it is held to, decided before anything is downloaded.
    auto known = load_known_archive_sums();
    auto k = known.find(name);
    HeldSum want = k != known.end()
                       ? held_sum(name, k->second.sha256, k->second.size, k->second.source)
                       : held_sum(name, "", 0, "");
    const std::string url = options_.mirror + "/" + archive.path;
    fs::path file = fetch_held(name, url, want, store_.cache_dir() / "downloads", options_.download);

    if (options_.progress && !want.sha256.empty())
        options_.progress->message(name + ": sha256 checked against " + want.from);
    // install_file learns the id from the contents; when it is this one, the lock is ours.
    return install_held(
        [&](const HeldInstall& held) { return install_archive(file, url, nullptr, "", held); },
        Kind::Cudnn, id, name, url, file, want);
}

} // namespace cvm::install
