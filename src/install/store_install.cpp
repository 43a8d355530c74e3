// The StoreInstaller (store_install.h): the mirror, its URLs, pinned sums and whole specs. Its
// installs live in install_archive.cpp, install_toolkit.cpp, install_legacy.cpp,
// install_cuda_installer.cpp and install_nccl.cpp, on the staging of install_staging.cpp.
#include "install/store_install.h"
#include "install/archive_name.h"

#include "install/installed_files.h"
#include "spec/redist_platform.h"
#include "store/resolve.h"
#include "spec/spec_match.h"
#include "install/error.h"
#include "install/extract.h"
#include "install/installer_package.h"
#include "install/progress.h"
#include "install/recognize.h"
#include "install/release_choice.h"
#include "install/sha256.h"
#include "install/version_lock.h"
#include "platform/cleanup_on_signal.h"
#include "platform/platform.h"
#include "registry/registry.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <thread>

namespace cvm::install {

namespace fs = std::filesystem;

std::string default_mirror() {
    std::string base = kNvidiaDownloadBase;
    // Credentials in it are kept for requests to the mirror, and never shown or stored.
    if (auto m = platform::get_env("CVM_MIRROR"); m && !m->empty())
        base = register_url_credentials(*m);
    while (!base.empty() && base.back() == '/')
        base.pop_back();
    return base;
}

StoreInstaller::StoreInstaller(const Store& store, StoreInstallerOptions options)
    : store_(store), options_(std::move(options)) {
    if (options_.host_platform.empty()) options_.host_platform = host_redist_platform();
    if (options_.mirror.empty()) options_.mirror = default_mirror();
    if (options_.download.progress == nullptr) options_.download.progress = options_.progress;
}

std::string StoreInstaller::manifest_url(const std::string& product,
                                         const std::string& manifest) const {
    return options_.mirror + "/" + product + "/redist/" + manifest;
}

std::string StoreInstaller::archive_url(const std::string& product,
                                        const std::string& relative) const {
    return options_.mirror + "/" + product + "/redist/" + relative;
}

void StoreInstaller::pin_archives(
    const std::vector<std::pair<std::string, std::string>>& url_sums) {
    options_.pinned_sha256.clear();
    for (const auto& [url, sha256] : url_sums)
        options_.pinned_sha256[basename_of_url(url)] = sha256;
}

std::vector<InstallResult> StoreInstaller::install_spec(const Spec& spec) {
    if (spec.system) fail_input("\"system\" names nothing to install");
    // Everything the registry can decide is decided before anything is downloaded: a cuDNN that
    // does not exist for the toolkit fails before the toolkit is fetched.
    std::optional<Version> installed;
    Spec only_cuda;
    only_cuda.cuda = spec.cuda;
    only_cuda.name = spec.name;
    try {
        installed = resolve(store_, only_cuda).toolkit.version;
    } catch (const ResolveError&) {
    }
    // A toolkit's name (import --as) is this machine's: nothing to fetch for it, only the cuDNN
    // and NCCL for its release.
    if (!installed && !spec.name.empty())
        fail_input("no toolkit is named " + spec.name + ": `cvm install` takes a release (12.4, 12.4+9), "
                   "and a name is given to a folder with `cvm import DIR --as " + spec.name + "`");
    Version toolkit =
        installed ? *installed
                  : choose_toolkit(options_.registry, spec.cuda, options_.host_platform).version;
    // A matching cuDNN may be there already, even before its toolkit.
    bool cudnn_missing = spec.cudnn.has_value();
    if (spec.cudnn)
        for (const auto& [id, layer] : store_.ids(Kind::Cudnn)) {
            (void)layer;
            if (auto c = parse_cudnn_id(id); c && cudnn_fits(spec, *c, toolkit)) cudnn_missing = false;
        }
    auto cudnn = cudnn_missing
                     ? choose_cudnn_for(options_.registry, spec, toolkit, options_.host_platform)
                     : std::nullopt;
    if (cudnn_missing && !cudnn && spec.cudnn->parts.size() < 3)
        fail_input("no cuDNN " + spec.cudnn->str() + " for CUDA " + toolkit.str() +
                       " is in cvm's release list; give the full version (e.g. 9.1.0)",
                   "not_found");
    std::vector<InstallResult> results;
    if (!installed && spec.cuda.parts.size() < 3 && options_.progress)
        options_.progress->message("CUDA " + spec.cuda.str() + " is " + toolkit.str() +
                                   ", the newest " + spec.cuda.str() + " release cvm knows");
    // An NCCL of the spec's version built for the toolkit's CUDA major, unless one is there.
    bool nccl_missing = spec.nccl.has_value();
    if (spec.nccl)
        for (const auto& [id, layer] : store_.ids(Kind::Nccl)) {
            (void)layer;
            if (auto n = parse_nccl_id(id); n && nccl_fits(spec, *n, toolkit)) nccl_missing = false;
        }
    std::optional<NcclPlan> nccl;
    if (nccl_missing)
        nccl = plan_nccl(spec.nccl->str(),
                         spec.nccl_cuda ? spec.nccl_cuda->str() : std::to_string(toolkit.major()),
                         options_.host_platform, options_.progress);
    if (!installed) results.push_back(install_toolkit(toolkit.str(), {}));
    if (cudnn_missing) {
        if (cudnn)
            results.push_back(install_cudnn(cudnn->first, cudnn->second));
        else
            results.push_back(install_cudnn(spec.cudnn->str(),
                                            spec.cudnn_cuda ? spec.cudnn_cuda->str()
                                                            : std::to_string(toolkit.major())));
    }
    if (nccl) results.push_back(install_nccl_plan(*nccl));
    return results;
}

} // namespace cvm::install
