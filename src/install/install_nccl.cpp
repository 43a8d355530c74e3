// StoreInstaller::install_nccl: an NCCL build from NVIDIA's public folder
// <mirror>/redist/nccl/<folder>/, which has no manifest. The registry (registry/nccl.toml) names
// each release's archives per CUDA; the download is held to the SHA-256 a public source gives, else
// to the one recorded when it was first downloaded, else to a project's cvm.lock; with none, the
// first download is trusted and its sum recorded (held_download.h), exactly as for legacy cuDNN
// archives.
#include "install/error.h"
#include "install/held_download.h"
#include "install/progress.h"
#include "install/store_install.h"
#include "install/version_lock.h"
#include "registry/nccl.h"
#include "registry/registry.h"

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

std::string build_list(const registry::NcclRelease& rel) {
    std::string out;
    for (const auto& b : rel.builds)
        out += (out.empty() ? "" : ", ") + b.cuda.str();
    return out;
}

std::vector<registry::NcclRelease> nccl_registry() {
    try {
        return registry::load_nccl_releases();
    } catch (const registry::RegistryError& e) {
        fail_operation(std::string("cannot read cvm's NCCL registry: ") + e.what(), "registry");
    }
}

} // namespace

NcclPlan plan_nccl(const std::string& version_text, const std::string& cuda_text,
                   const std::string& host, Progress* progress) {
    if (host.rfind("linux-", 0) != 0)
        fail_input("NVIDIA publishes NCCL for Linux only, not " + host, "not_installable");
    auto requested = parse_version(version_text, 1, 3);
    if (!requested)
        fail_input("\"" + printable(version_text) + "\" is not an NCCL version like 2.21.5");
    std::optional<Version> cuda;
    if (!cuda_text.empty()) {
        cuda = parse_version(cuda_text, 1, 2);
        if (!cuda)
            fail_input("--cuda " + printable(cuda_text) + " is not a CUDA version like 12 or 12.4");
    }
    auto releases = nccl_registry();
    const registry::NcclRelease* rel = registry::find_nccl_release(releases, *requested);
    std::string name, folder, sha256, sha_source;
    Version version, build_cuda;
    if (rel) {
        const registry::NcclBuild* build = registry::choose_nccl_build(*rel, cuda);
        if (build == nullptr) {
            // A full version and CUDA minor the registry has no build of: NVIDIA's usual name is
            // tried.
            if (!(requested->parts.size() == 3 && cuda && cuda->parts.size() == 2))
                fail_input("NCCL " + rel->version.str() + " has no build for CUDA " +
                               (cuda ? cuda->str() : "") +
                               " in cvm's registry (its builds are for CUDA " + build_list(*rel) +
                               "); give the CUDA as X.Y to try NVIDIA's archive name, or see `cvm "
                               "list --available nccl " +
                               rel->version.str() + "`",
                           "not_found");
        } else {
            const registry::NcclArchive* a = build->archive_for(host);
            if (a == nullptr)
                fail_input("cvm's registry names no " + host + " archive of NCCL " +
                               rel->version.str() + " for CUDA " + build->cuda.str() +
                               "; download it and run `cvm install FILE`",
                           "not_installable");
            name = a->name;
            sha256 = a->sha256;
            sha_source = build->sha256_source;
            build_cuda = build->cuda;
        }
        version = rel->version;
        folder = rel->folder;
    } else {
        if (requested->parts.size() != 3 || !cuda || cuda->parts.size() != 2)
            fail_input(
                "NCCL " + requested->str() +
                    " is not in cvm's release list; give its full version and CUDA "
                    "(`cvm install nccl 2.21.5 --cuda 12.4`) to try NVIDIA's archive of that name",
                "not_found");
        version = *requested;
        folder = "v" + version.str();
    }
    if (name.empty()) {
        build_cuda = *cuda;
        name = registry::conventional_nccl_archive(version, build_cuda, host);
        if (progress)
            progress->message(name + ": not in cvm's release list; trying NVIDIA's name for it");
    }
    return {NcclId{version, build_cuda}.str(), name, folder, sha256, sha_source};
}

InstallResult StoreInstaller::install_nccl(const std::string& version_text,
                                           const std::string& cuda_text) {
    return install_nccl_plan(
        plan_nccl(version_text, cuda_text, options_.host_platform, options_.progress));
}

InstallResult StoreInstaller::install_nccl_plan(const NcclPlan& plan) {
    const std::string& id = plan.id;
    const std::string& name = plan.archive;

    auto version_lock = lock_version(store_, Kind::Nccl, id, options_.progress);
    if (auto existing = options_.reinstall ? std::nullopt : store_.find(Kind::Nccl, id)) {
        if (options_.progress) options_.progress->message("NCCL " + id + " is already installed");
        return {Kind::Nccl, id, existing->path, true, {}};
    }
    // The sum it is held to, decided before anything is downloaded.
    HeldSum want = held_sum(name, plan.sha256, 0, plan.sha256_source);
    const std::string url = options_.mirror + "/redist/nccl/" + plan.folder + "/" + name;
    fs::path file =
        fetch_held(name, url, want, store_.cache_dir() / "downloads", options_.download);
    if (options_.progress && !want.sha256.empty())
        options_.progress->message(name + ": sha256 checked against " + want.from);
    // install_file reads the version and CUDA from the library itself; when they are this id's,
    // the lock is ours.
    return install_held(
        [&](const HeldInstall& held) { return install_archive(file, url, nullptr, "", held); },
        Kind::Nccl, id, name, url, file, want);
}

} // namespace cvm::install
