// `cvm lock [--check]`: record the project's exact toolchain in cvm.lock beside its .cudaversion
// (or, with --check, compare what is installed here with it).
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/errors.h"
#include "project/lockfile.h"
#include "store/resolve.h"
#include "platform/platform.h"

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

} // namespace cvm::cli
