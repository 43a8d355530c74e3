#pragma once
// Installing into the store (StoreInstaller): archives (files, URLs), toolkits and cuDNN builds
// from NVIDIA's manifests, and whatever a spec names. "Installer" alone, in cvm's names, is one of
// NVIDIA's (runfile, sevenzip_installer, installer_layout, installer_package).
//
// Every install is staged in $CVM_ROOT/.staging/install-*/ (same filesystem as the store) and
// moved into place with one rename by the store's one writer (Store::commit_entry, which imports
// go through too), under a lock per version: two installs of the same thing end with one copy, a
// killed install leaves nothing listed (its staging folder is removed by the next run), and a
// failure of any kind leaves the store as it was.
#include "spec/spec.h"
#include "store/store.h"
#include "install/download.h"
#include "install/held_download.h"
#include "install/manifest.h"
#include "install/release_choice.h"
#include "install/stream_extract.h"

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cvm::registry {
struct Registry;
struct CudnnRelease;
} // namespace cvm::registry

namespace cvm::install {

class Progress;
struct Staged; // a staging folder, locked while in use (install_staging.h)

// The NCCL archive an install of a version for a CUDA fetches (install_nccl.cpp): decided from the
// registry before anything is downloaded.
struct NcclPlan {
    std::string id;                    // "2.21.5-cuda12.4"
    std::string archive;               // "nccl_2.21.5-1+cuda12.4_x86_64.txz"
    std::string folder;                // below <mirror>/redist/nccl/: "v2.21.5"
    std::string sha256, sha256_source; // empty: trusted on first use
};
// Throws InstallError (input) when the registry knows no such release or build, and the version
// and CUDA given are not full enough to try NVIDIA's archive name.
NcclPlan plan_nccl(const std::string& version, const std::string& cuda,
                   const std::string& host_platform, Progress* progress);

// CVM_MIRROR, or NVIDIA's https://developer.download.nvidia.com/compute; no trailing slash.
std::string default_mirror();

struct StoreInstallerOptions {
    std::string host_platform; // empty: the host's (host_redist_platform())
    std::string mirror;        // empty: default_mirror()
    DownloadOptions download = DownloadOptions::from_environment();
    Progress* progress = nullptr;
    const registry::Registry* registry = nullptr; // release data, when loaded
    unsigned parallel = 0;                        // archives extracted at once (0: per core)
    // Archive file name (as in the download cache) -> the SHA-256 the caller requires
    // (`cvm install --locked`; see StoreInstaller::pin_archives).
    std::map<std::string, std::string> pinned_sha256;
    // Install even when the id is in the store, replacing the entry in one rename at the end
    // (`cvm install --reinstall ID`); a failure leaves the old one as it was.
    bool reinstall = false;
};

// What a caller that already decided part of an install hands to the step that stages its file
// (install_held, install_cudnn): passed along with the call, never kept in the installer.
struct HeldInstall {
    std::string version_lock;      // "<kind>-<id>" whose version lock the caller holds
    std::string first_use_archive; // the archive to record as trusted on first use
};

struct InstallResult {
    Kind kind = Kind::Cuda;
    std::string id;
    std::filesystem::path path; // the entry's root folder
    bool already_installed = false;
    std::vector<std::string> components;
};

class StoreInstaller {
public:
    StoreInstaller(const Store& store, StoreInstallerOptions options);
    // The release data it was given (nullptr when none was loaded).
    const registry::Registry* release_registry() const { return options_.registry; }

    // A local archive of any family. `origin` is recorded in the entry (URL or path). `cuda`
    // (`cvm install FILE --cuda 11.2`): the CUDA a cuDNN or NCCL build is for, where its name no
    // longer says it (a renamed legacy cuDNN); checked against the name and the libraries.
    InstallResult install_file(const std::filesystem::path& archive,
                               const std::string& origin = "", const std::string& cuda = "");
    // A toolkit from an NVIDIA installer already downloaded: the Linux runfile or the Windows
    // local installer (installer_package.h); `components` as for install_toolkit. install_file
    // comes here for installers.
    InstallResult install_installer(const std::filesystem::path& installer,
                                    const std::vector<std::string>& components,
                                    const std::string& origin = "");
    // An archive at a URL (https://, http:// on loopback, file://), through the download cache.
    // `sha256`, when given, is checked before anything is extracted.
    InstallResult install_url(const std::string& url, const std::string& sha256 = "");
    // A toolkit from redistrib_<version>.json; `components` empty means the default set.
    InstallResult install_toolkit(const std::string& version,
                                  const std::vector<std::string>& components);
    // A cuDNN build from its manifest, for CUDA `cuda` ("12", "11.8").
    InstallResult install_cudnn(const std::string& version, const std::string& cuda);
    // An NCCL build from NVIDIA's public folder <mirror>/redist/nccl/ (no manifest: the registry's
    // registry/nccl.toml names the archives), for CUDA `cuda` ("12", "12.4"; empty: the newest).
    InstallResult install_nccl(const std::string& version, const std::string& cuda);
    InstallResult install_nccl_plan(const NcclPlan& plan);
    // Whatever of the spec is missing (toolkit with default components, then cuDNN, then NCCL).
    std::vector<InstallResult> install_spec(const Spec& spec);

    // Requires these archives (URL, SHA-256) and no others from manifests: a manifest that names
    // another file, or another sum for one, is refused before anything is downloaded; each
    // download is then checked against the same sum. Files are matched by name, not by host.
    void pin_archives(const std::vector<std::pair<std::string, std::string>>& url_sums);

    // Removes staging folders of installs, imports and removals that are no longer running
    // (Store::clean_staging).
    void clean_staging() const;

private:
    InstallResult commit(Staged& staged, Entry entry);
    void finish_toolkit_root(Staged& staged, const std::filesystem::path& root,
                             const std::string& host, const nlohmann::json& version_json, Entry& e);
    std::string manifest_url(const std::string& product, const std::string& manifest) const;
    std::string archive_url(const std::string& product, const std::string& relative) const;
    // What fetching the manifest's archives takes: a download into the cache for each, or, for
    // file:// mirrors, the file itself (verified here). No destinations yet.
    std::vector<StreamJob> archive_jobs(const std::string& product,
                                        const std::vector<const Artifact*>& items);
    // install_file, with the archive downloading while it is extracted when `download` is given.
    InstallResult install_archive(const std::filesystem::path& archive, const std::string& origin,
                                  const StreamJob* download, const std::string& cuda = "",
                                  const HeldInstall& held = {});
    // install_installer, for a caller that holds what `held` says.
    InstallResult install_installer_held(const std::filesystem::path& installer,
                                         const std::vector<std::string>& components,
                                         const std::string& origin, const HeldInstall& held);

    Store store_;
    StoreInstallerOptions options_;
    // A cuDNN from before the manifests, from NVIDIA's public folder (install_legacy.cpp).
    InstallResult install_legacy_cudnn(const registry::CudnnRelease& release,
                                       const std::string& cuda);
    // A toolkit before the manifests, from NVIDIA's local installer on the mirror (its version lock
    // held by the caller): checked against NVIDIA's md5sum.txt and the held sum, then installed.
    InstallResult install_toolkit_installer(const ToolkitChoice& choice,
                                            const std::vector<std::string>& components);
    // The sum the download `name` is held to (held_download.h): the one a public source gives
    // (`sha256`, `size` when known, from `source`; empty when none), else the one recorded on first
    // use, else the one a project's cvm.lock pins.
    HeldSum held_sum(const std::string& name, const std::string& sha256, std::uint64_t size,
                     const std::string& source) const;
    // Runs `install` (of the held download `file`, see held_download.h) under the version lock of
    // `kind` `id` the caller holds, handing it what is held; undoes it when it installed something
    // else, and records the sum of an archive trusted on first use.
    InstallResult install_held(const std::function<InstallResult(const HeldInstall&)>& install,
                               Kind kind,
                               const std::string& id, const std::string& name,
                               const std::string& url, const std::filesystem::path& file,
                               const HeldSum& want);
};

} // namespace cvm::install
