// `cvm install --locked` (cvm-install): installs exactly what the project's cvm.lock records.
#include "cli/lock_install.h"

#include "cli/context.h"
#include "cli/errors.h"
#include "core/lockfile.h"
#include "core/redist_platform.h"
#include "platform/platform.h"
#include "registry/nccl.h"

namespace cvm::cli {

namespace {

bool under(const std::string& url, const std::string& base) {
    return url.size() > base.size() && url.compare(0, base.size(), base) == 0 &&
           url[base.size()] == '/';
}

bool registry_knows(const registry::Registry* reg, const LockedToolchain& tc) {
    if (reg == nullptr) return false;
    if (tc.kind == Kind::Cudnn) return registry::find_cudnn_build(*reg, tc.id).has_value();
    if (tc.kind == Kind::Nccl) {
        auto id = parse_nccl_id(tc.id);
        try {
            auto releases = registry::load_nccl_releases();
            const auto* rel = id ? registry::find_nccl_release(releases, id->version) : nullptr;
            return rel && rel->version == id->version &&
                   registry::choose_nccl_build(*rel, id->cuda);
        } catch (const registry::RegistryError&) {
            return false;
        }
    }
    auto v = parse_toolkit_id(tc.id);
    const registry::CudaRelease* rel = v ? registry::find_cuda_release(*reg, *v) : nullptr;
    return rel != nullptr && rel->version == *v;
}

// Why each download cvm.lock asks for is not one cvm vouches for: the release must be in the
// registry, and each archive must come from NVIDIA's site or the configured mirror.
std::vector<std::string> untrusted_sources(const std::vector<const LockedToolchain*>& wanted,
                                           const Store& store, const registry::Registry* reg,
                                           const std::string& mirror) {
    const std::string nvidia = kNvidiaDownloadBase;
    std::vector<std::string> out;
    for (const auto* tc : wanted) {
        if (tc->imported || store.find(tc->kind, tc->id)) continue; // nothing to download
        std::string what = std::string(kind_dir(tc->kind)) + " " + tc->id;
        if (!registry_knows(reg, *tc))
            out.push_back(what + " is not a release in cvm's registry, so nothing vouches for "
                                 "the archives cvm.lock names for it");
        for (const auto& a : tc->archives) {
            std::string fetched = mirrored_url(a.url, mirror);
            if (!under(fetched, nvidia) && !under(fetched, mirror))
                out.push_back(what + ": " + printable(a.url) + " is neither NVIDIA's (" + nvidia +
                              ") nor the mirror's (CVM_MIRROR" +
                              (mirror != nvidia ? "=" + mirror : std::string(" is unset")) + ")");
        }
    }
    return out;
}

} // namespace

std::vector<install::InstallResult> install_locked(install::Installer& installer,
                                                   const Store& store,
                                                   const registry::Registry* reg,
                                                   bool allow_lock_urls) {
    std::error_code ec;
    fs::path cwd = fs::current_path(ec);
    auto file = find_lockfile(cwd);
    if (!file)
        throw UsageError("install --locked: no .cudaversion in " + cwd.u8string() +
                         " or above, so no cvm.lock; run it in the project's folder");
    if (!fs::exists(*file, ec))
        throw UsageError("install --locked: there is no " + file->u8string() +
                         "; run `cvm lock` where the toolchain is installed and commit cvm.lock");
    Lockfile lock;
    try {
        lock = read_lockfile(*file);
    } catch (const LockfileError& e) {
        throw UsageError(std::string("install --locked: ") + e.what());
    }
    std::vector<const LockedToolchain*> wanted = lock.toolchains();
    std::string host = install::host_redist_platform();
    for (const auto* tc : wanted)
        if (!tc->platform.empty() && !host.empty() && tc->platform != host)
            throw UsageError("install --locked: " + file->u8string() + " records " +
                             kind_dir(tc->kind) + " " + tc->id + " for " + tc->platform +
                             ", but this machine is " + host + "; lock the project on " + host);

    // Refuse before anything is installed: what is here must match, what is missing must be
    // fetchable.
    std::vector<std::string> problems;
    for (const auto* tc : wanted) {
        std::string what = std::string(kind_dir(tc->kind)) + " " + tc->id;
        if (auto e = store.find(tc->kind, tc->id)) {
            for (auto& d : lock_differences(*tc, *e))
                problems.push_back(d);
        } else if (tc->imported) {
            problems.push_back(what + " is locked as imported from a folder (no archive is known); "
                                      "import the same build here with `cvm import DIR`");
        } else if (!tc->reproducible()) {
            problems.push_back(what + " is locked without an archive URL to fetch it from; "
                                      "install it by hand, then check with `cvm lock --check`");
        }
    }
    if (!problems.empty()) {
        for (const auto& p : problems)
            note(p);
        throw Failure("install --locked: this store differs from " + file->u8string() +
                      "; nothing was installed");
    }
    const std::string mirror = install::default_mirror();
    if (!allow_lock_urls) {
        auto untrusted = untrusted_sources(wanted, store, reg, mirror);
        for (const auto& u : untrusted)
            note(u);
        if (!untrusted.empty())
            throw UsageError("install --locked: " + file->u8string() +
                             " asks for downloads cvm does not vouch for (above); nothing was "
                             "installed. If you trust whoever wrote it, run `cvm install --locked "
                             "--allow-lock-urls`");
    }

    // Every archive must be the locked one: the installer compares the mirror's manifests with
    // these sums before it downloads anything.
    std::vector<std::pair<std::string, std::string>> pinned;
    for (const auto* tc : wanted)
        for (const auto& a : tc->archives) pinned.emplace_back(a.url, a.sha256);
    installer.pin_archives(pinned);
    std::vector<install::InstallResult> results;
    // The lock is installed whole or not at all: a toolchain this command installed is taken back
    // when the next one fails (a toolkit fetched, then the lock's cuDNN refused).
    auto take_back = [&] {
        for (const auto& done : results) {
            if (done.already_installed) continue;
            try {
                store.remove(done.kind, done.id);
                note("removed " + std::string(kind_dir(done.kind)) + " " + done.id +
                     " again: cvm.lock is installed whole or not at all");
            } catch (const std::exception&) {
            }
        }
    };
    try {
        for (const auto* tc : wanted) {
            if (auto e = store.find(tc->kind, tc->id)) {
                results.push_back({tc->kind, tc->id, e->path, true, e->components});
                continue;
            }
            install::InstallResult r;
            if (tc->kind == Kind::Cuda) {
                r = installer.install_toolkit(tc->id, tc->components);
            } else if (tc->kind == Kind::Nccl && tc->archives.size() == 1 &&
                       tc->archives.front().url.find("/redist/nccl/") != std::string::npos) {
                auto id = parse_nccl_id(tc->id);
                r = installer.install_nccl(id->version.str(), id->cuda.str());
            } else {
                auto id = parse_cudnn_id(tc->id);
                const LockedArchive& a = tc->archives.front();
                if (tc->archives.size() == 1 &&
                    (a.url.find("/cudnn/redist/") != std::string::npos ||
                     a.url.find("/redist/cudnn/") != std::string::npos))
                    r = installer.install_cudnn(id->version.str(), id->cuda.str());
                else
                    r = installer.install_url(mirrored_url(a.url, mirror), a.sha256);
            }
            std::string what = std::string(kind_dir(tc->kind)) + " " + tc->id;
            auto e = store.find(tc->kind, tc->id);
            std::vector<std::string> diffs;
            if (!e) {
                diffs.push_back(what + ": the archive installed " + kind_dir(r.kind) + " " + r.id +
                                " instead");
            } else {
                diffs = lock_differences(*tc, *e);
            }
            if (!diffs.empty()) {
                // Take back what this command installed: the store keeps only what is locked.
                if (!r.already_installed) {
                    try {
                        store.remove(r.kind, r.id);
                    } catch (const std::exception&) {
                    }
                }
                for (const auto& d : diffs)
                    note(d);
                throw Failure("install --locked: what the mirror serves for " + what +
                              " is not what " + file->u8string() + " records; removed it again");
            }
            results.push_back(r);
        }
    } catch (...) {
        take_back();
        throw;
    }
    try {
        Selection sel = current_selection(store, std::nullopt);
        if (sel.origin != Selection::Origin::None && !sel.spec.system &&
            resolve(store, sel.spec).active() != lock.active())
            note("note: " + sel.origin_text() + " selects " + resolve(store, sel.spec).active() +
                 " here, not the locked " + lock.active() + "; `cvm use " + lock.active() +
                 "` pins it");
    } catch (const std::exception&) {
    }
    return results;
}

} // namespace cvm::cli
