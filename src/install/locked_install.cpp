// `cvm install --locked` (locked_install.h): installs exactly what the project's cvm.lock
// records, refusing before anything is installed and taking back what it installed on a failure.
#include "install/locked_install.h"

#include <optional>
#include <system_error>

#include "project/lockfile.h"
#include "spec/redist_platform.h"
#include "store/resolve.h"
#include "install/error.h"
#include "install/lock_sources.h"
#include "install/manifest.h"

namespace cvm::install {

namespace fs = std::filesystem;

LockedInstall install_locked(StoreInstaller& installer, const Store& store,
                             const registry::Registry* reg, bool allow_lock_urls,
                             const fs::path& cwd,
                             const std::function<void(const std::string&)>& note) {
    std::error_code ec;
    auto file = find_lockfile(cwd);
    if (!file)
        fail_input("install --locked: no .cudaversion in " + cwd.u8string() +
                   " or above, so no cvm.lock; run it in the project's folder");
    if (!fs::exists(*file, ec) && fs::is_symlink(fs::symlink_status(*file, ec))) {
        // A link that leads nowhere is not "no cvm.lock" (issue 33).
        std::error_code why;
        bool loop =
            !fs::exists(fs::status(*file, why)) && why == std::errc::too_many_symbolic_link_levels;
        fail_input("install --locked: " + file->u8string() +
                   (loop ? " is a link that leads nowhere (a loop)"
                         : " is a link to " + fs::read_symlink(*file, ec).u8string() +
                               ", which does not exist") +
                   "; remove it and run `cvm lock` where the toolchain is installed");
    }
    if (!fs::exists(*file, ec))
        fail_input("install --locked: there is no " + file->u8string() +
                   "; run `cvm lock` where the toolchain is installed and commit cvm.lock");
    Lockfile lock;
    try {
        lock = read_lockfile(*file);
    } catch (const LockfileError& e) {
        fail_input(std::string("install --locked: ") + e.what());
    }
    std::vector<const LockedToolchain*> wanted = lock.toolchains();
    std::string host = host_redist_platform();
    for (const auto* tc : wanted)
        if (!tc->platform.empty() && !host.empty() && tc->platform != host)
            fail_input("install --locked: " + file->u8string() + " records " + kind_dir(tc->kind) +
                       " " + tc->id + " for " + tc->platform + ", but this machine is " + host +
                       "; lock the project on " + host);

    // What the store holds of each, read once: the checks and the installs below use it.
    std::vector<std::optional<Entry>> found;
    std::vector<const LockedToolchain*> missing;
    for (const auto* tc : wanted) {
        found.push_back(store.find(tc->kind, tc->id));
        if (!found.back()) missing.push_back(tc);
    }

    // Refuse before anything is installed: what is here must match, what is missing must be
    // fetchable.
    std::vector<std::string> problems;
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        const LockedToolchain* tc = wanted[i];
        std::string what = std::string(kind_dir(tc->kind)) + " " + tc->id;
        if (const auto& e = found[i]) {
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
        fail_operation("install --locked: this store differs from " + file->u8string() +
                       "; nothing was installed");
    }
    const std::string mirror = default_mirror();
    if (!allow_lock_urls) {
        auto untrusted = untrusted_sources(missing, reg, mirror);
        for (const auto& u : untrusted)
            note(u);
        if (!untrusted.empty())
            fail_input("install --locked: " + file->u8string() +
                       " asks for downloads cvm does not vouch for (above); nothing was "
                       "installed. If you trust whoever wrote it, run `cvm install --locked "
                       "--allow-lock-urls`");
    }

    // Every archive must be the locked one: the installer compares the mirror's manifests with
    // these sums before it downloads anything.
    std::vector<std::pair<std::string, std::string>> pinned;
    for (const auto* tc : wanted)
        for (const auto& a : tc->archives)
            pinned.emplace_back(a.url, a.sha256);
    installer.pin_archives(pinned);
    std::vector<InstallResult> results;
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
        for (std::size_t i = 0; i < wanted.size(); ++i) {
            const LockedToolchain* tc = wanted[i];
            if (const auto& e = found[i]) {
                results.push_back({tc->kind, tc->id, e->path, true, e->components});
                continue;
            }
            InstallResult r;
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
            // Read again: what the install put in the store is compared with the lock.
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
                fail_operation("install --locked: what the mirror serves for " + what +
                               " is not what " + file->u8string() + " records; removed it again");
            }
            results.push_back(r);
        }
    } catch (...) {
        take_back();
        throw;
    }
    return {results, lock.active()};
}

} // namespace cvm::install
