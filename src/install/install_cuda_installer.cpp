// StoreInstaller::install_toolkit_installer: a CUDA toolkit from before NVIDIA's manifests (11.0 to
// 11.3; 10.1 and 10.2), from NVIDIA's local installer on the mirror:
// <base>/cuda/<X.Y.Z>/local_installers/<name> (<base>/cuda/<X.Y>/Prod/local_installers/ before
// 11.0). The installer is checked against the MD5 NVIDIA publishes beside it
// (docs/sidebar/md5sum.txt) and held to the SHA-256 a public source gives (the registry), else to
// the one trusted on first use (held_download.h); then it is read as `cvm install FILE` reads it.
#include "install/error.h"
#include "install/held_download.h"
#include "install/installer_package.h"
#include "install/progress.h"
#include "install/sha256.h"
#include "install/store_install.h"

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

// The folder of a release's installers and sums below the mirror.
std::string release_folder(const Version& v) {
    if (v.major() >= 11) return "cuda/" + v.str();
    return "cuda/" + std::to_string(v.parts[0]) + "." + std::to_string(v.parts[1]) + "/Prod";
}

} // namespace

InstallResult
StoreInstaller::install_toolkit_installer(const ToolkitChoice& choice,
                                          const std::vector<std::string>& components) {
    const std::string& name = choice.installer;
    const std::string id = choice.version.str();
    const std::string folder = options_.mirror + "/" + release_folder(choice.version);
    const std::string url = folder + "/local_installers/" + name;
    const std::string sums_url = folder + "/docs/sidebar/md5sum.txt";

    // NVIDIA's MD5 first: a mirror without it, or a list without this installer, stops here.
    std::string sums;
    try {
        sums = fetch_text(sums_url, options_.download);
    } catch (const InstallError& e) {
        fail_operation("cannot read NVIDIA's checksums of CUDA " + id + " (" + sums_url + "): " + e.what() +
                           "; cvm checks every installer against them. Check CVM_MIRROR, or download " + name +
                           " yourself and run `cvm install FILE`",
                       e.code().empty() ? "network" : e.code());
    }
    const std::string md5 = md5_listed_for(sums, name);
    if (md5.empty())
        fail_operation(sums_url + " lists no MD5 for " + name + "; check CVM_MIRROR", "checksum");

    HeldSum want = held_sum(name, choice.installer_sha256, 0, choice.installer_source);
    if (options_.progress)
        options_.progress->message("CUDA " + id + " has no manifest: installing from NVIDIA's installer " + name);
    fs::path file = fetch_held(name, url, want, store_.cache_dir() / "downloads", options_.download);
    const std::string got = file_digest(file, Sha256::Algorithm::Md5);
    if (!sha256_equal(got, md5)) {
        std::error_code ec;
        if (file_url_path(url).empty()) fs::remove(file, ec); // a download, not the mirror's own file
        fail_operation(name + " from " + url + " does not have the MD5 NVIDIA publishes in " + sums_url +
                           " (expected " + md5 + ", got " + got + "); deleted, nothing was installed. Check "
                           "CVM_MIRROR and install again",
                       "checksum");
    }
    if (options_.progress)
        options_.progress->message(name + ": MD5 checked against NVIDIA's md5sum.txt" +
                                   (want.sha256.empty() ? std::string() : ", sha256 against " + want.from));

    return install_held(
        [&](const HeldInstall& held) {
            return install_installer_held(file, components, url, held);
        },
        Kind::Cuda, id, name, url, file, want);
}

} // namespace cvm::install
