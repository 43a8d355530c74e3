// `cvm lock [--check]`: record the project's exact toolchain in cvm.lock beside its .cudaversion
// (or, with --check, compare what is installed here with it).
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/errors.h"
#include "cli/lock.h"
#include "core/lockfile.h"
#include "platform/platform.h"
#ifdef CVM_HAVE_INSTALL
#include "registry/nccl.h"
#endif

namespace cvm::cli {

namespace {

nlohmann::json toolchain_json(const LockedToolchain& tc) {
    nlohmann::json j;
    j["id"] = tc.id;
    j["source"] = tc.imported ? "imported" : "installed";
    if (!tc.platform.empty()) j["platform"] = tc.platform;
    j["components"] = tc.components;
    j["archives"] = nlohmann::json::array();
    for (const auto& a : tc.archives)
        j["archives"].push_back({{"name", a.name}, {"url", a.url}, {"sha256", a.sha256}});
    j["reproducible"] = tc.reproducible();
    return j;
}

std::string why_not_reproducible(const LockedToolchain& tc) {
    std::string what = std::string(kind_dir(tc.kind)) + " " + tc.id;
    if (tc.imported)
        return what + " is imported from a folder: the lock records no archive, so every "
                      "machine must `cvm import` the same build";
    if (tc.archives.empty())
        return what +
               " was installed without a recorded archive: `cvm install --locked` cannot fetch it";
    return what + " was installed from a local file: the lock records its archive's name and "
                  "SHA-256 but no source, so `cvm install --locked` cannot fetch it (install it by "
                  "URL, or through CVM_MIRROR, to lock where it came from)";
}

} // namespace

void register_lock(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "lock", "Record the project's exact toolkit and cuDNN (ids, components, archive URLs and "
                "SHA-256 sums) in cvm.lock beside its .cudaversion");
    auto check = std::make_shared<bool>(false);
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--check", *check,
                  "compare cvm.lock with what is installed here instead of writing it (exit 1 on "
                  "any difference)");
    cmd->add_flag("--json", *json, "print one JSON document");
    cmd->callback([check, json] {
        std::error_code ec;
        fs::path cwd = fs::current_path(ec);
        auto project = find_project_file(cwd);
        if (!project)
            throw UsageError("lock: no .cudaversion in " + cwd.u8string() +
                             " or above; run `cvm use SPEC` in the project first");
        std::optional<Selection> sel;
        try {
            sel = read_version_file(*project, Selection::Origin::ProjectFile);
        } catch (const SelectionError& e) {
            throw UsageError(e.what());
        }
        if (!sel)
            throw UsageError("lock: " + project->u8string() +
                             " holds no spec; run `cvm use SPEC` to write one");
        if (sel->spec.system)
            throw UsageError(
                "lock: " + sel->origin_text() +
                " selects 'system': there is no cvm toolchain to lock; run `cvm use SPEC`");
        if (auto v = platform::get_env("CVM_VERSION"); v && !v->empty())
            note("CVM_VERSION is set, but cvm.lock records the project's " + sel->origin_text());
        Store store = open_store();
        Resolved r = resolve_selection(store, *sel);
        fs::path file = lockfile_path_for(*project);

        if (*check) {
            Lockfile locked;
            try {
                locked = read_lockfile(file);
            } catch (const LockfileError& e) {
                throw UsageError(std::string("lock --check: ") + e.what());
            }
            std::vector<std::string> diffs;
            if (locked.active() != r.active())
                diffs.push_back(file.u8string() + " locks " + locked.active() + ", but " +
                                sel->origin_text() + " selects " + r.active() + " here");
            if (locked.cuda.id == r.toolkit.id)
                for (auto& d : lock_differences(locked.cuda, r.toolkit))
                    diffs.push_back(d);
            if (locked.cudnn && r.cudnn && locked.cudnn->id == r.cudnn->id)
                for (auto& d : lock_differences(*locked.cudnn, *r.cudnn))
                    diffs.push_back(d);
            if (locked.nccl && r.nccl && locked.nccl->id == r.nccl->id)
                for (auto& d : lock_differences(*locked.nccl, *r.nccl))
                    diffs.push_back(d);
            if (*json) {
                nlohmann::json doc;
                doc["file"] = file.u8string();
                doc["locked"] = locked.active();
                doc["selected"] = r.active();
                doc["matches"] = diffs.empty();
                doc["differences"] = diffs;
                print_json(doc);
            } else if (diffs.empty()) {
                note(r.active() + " matches " + file.u8string());
            } else {
                for (const auto& d : diffs)
                    note(d);
                note("run `cvm install --locked` to install what is locked, or `cvm lock` to lock "
                     "what is here");
            }
            if (!diffs.empty()) throw ExitCode{1};
            return;
        }

        Lockfile lock = lockfile_of(r, sel->spec.str());
        try {
            write_lockfile(file, lock);
        } catch (const std::exception& e) {
            throw Failure("lock: " + error_text(e));
        }
        if (*json) {
            nlohmann::json doc;
            doc["file"] = file.u8string();
            doc["spec"] = lock.spec;
            doc["active"] = lock.active();
            doc["cuda"] = toolchain_json(lock.cuda);
            doc["cudnn"] = lock.cudnn ? toolchain_json(*lock.cudnn) : nlohmann::json(nullptr);
            doc["nccl"] = lock.nccl ? toolchain_json(*lock.nccl) : nlohmann::json(nullptr);
            print_json(doc);
            return;
        }
        note("wrote " + file.u8string() + ": " + lock.active());
        for (const auto* tc : lock.toolchains())
            if (!tc->reproducible()) note("note: " + why_not_reproducible(*tc));
        for (const auto* tc : lock.toolchains())
            for (const auto& a : tc->archives)
                if (a.first_use)
                    note("note: the sha256 of " + a.name + " was trusted on first use (no public source "
                         "gives it); the lock holds every later download to it");
        hint("git add " + file.u8string(), "commit it; `cvm install --locked` reproduces it elsewhere");
    });
}

#ifdef CVM_HAVE_INSTALL
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
    const std::string nvidia = install::kNvidiaDownloadBase;
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
#endif

} // namespace cvm::cli
