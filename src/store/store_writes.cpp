// What changes the store's writable layer: Store::commit_entry (the one writer of an entry into
// the layout, for installs and imports alike), Store::add_imported and Store::remove (store.h).
#include "store/store.h"

#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "store/assemble.h"
#include "spec/combination_name.h"
#include "store/entry_format.h"
#include "store/staging_folder.h"

namespace cvm {

fs::path Store::commit_entry(Kind kind, const std::string& id, const fs::path& staged,
                             const fs::path& aside, bool replace) const {
    fs::path target = root() / kind_dir(kind) / fs::u8path(id);
    fs::create_directories(target.parent_path());
    std::error_code ec;
    bool replacing = false;
    if (fs::exists(fs::symlink_status(target, ec))) {
        if (fs::exists(target / "entry", ec) && !replace)
            throw EntryCommitError(EntryCommitError::Step::Occupied, target, {});
        // A replaced entry stays whole until the new one is in; a folder without an entry is no
        // install (an interrupted removal): it goes at once.
        if (replace) {
            remove_whole_tree(aside);
            fs::rename(target, aside, ec);
            if (ec) throw EntryCommitError(EntryCommitError::Step::MoveAside, target, ec);
            replacing = true;
        } else {
            fs::remove_all(target, ec);
        }
    }
    fs::rename(staged, target, ec);
    if (ec) {
        std::error_code back;
        if (replacing) fs::rename(aside, target, back);
        throw EntryCommitError(EntryCommitError::Step::MoveIn, target, ec);
    }
    if (replacing) remove_whole_tree(aside);
    return target;
}

void Store::add_imported(const Entry& e, bool replace, const std::vector<RootLink>& plan) const {
    fs::path dir = root() / kind_dir(e.kind) / fs::u8path(e.id);
    std::error_code ec;
    auto already_there = [&] {
        return std::runtime_error(std::string(kind_dir(e.kind)) + " " + e.id +
                                  " is already in the store; run `cvm uninstall " + e.id +
                                  "` first");
    };
    if (fs::exists(dir / "entry", ec) && !replace) throw already_there();
    clean_staging();
    // Staged as an install is, in a folder locked while this run works in it: what a killed
    // import leaves there (the entry half made, or the old one moved aside) goes with the next
    // run's clean_staging, and nothing of it is listed.
    StagingFolder staging(*this, "import");
    const fs::path stage = staging.path() / "entry";
    const fs::path aside = staging.path() / "old";
    fs::create_directories(stage);
    {
        std::ofstream out(stage / "entry", std::ios::binary);
        out << serialize_entry(e);
        if (!out.flush()) throw std::runtime_error("cannot write " + (stage / "entry").u8string());
    }
    if (!plan.empty()) build_assembled_root(stage / "root", plan);
    try {
        commit_entry(e.kind, e.id, stage, aside, replace);
    } catch (const EntryCommitError& x) {
        if (x.step() == EntryCommitError::Step::Occupied) throw already_there();
        throw std::runtime_error("cannot register " + e.id + " in " + dir.u8string() + ": " +
                                 x.reason().message());
    }
    // Views link the files the replaced entry had; they are rebuilt on next use.
    if (replace) drop_views_of(e.kind, e.id);
}

void Store::remove(Kind kind, const std::string& id) const {
    auto e = find(kind, id);
    if (!e) throw std::runtime_error(std::string(kind_dir(kind)) + " " + id + " is not installed");
    if (e->layer != 0)
        throw std::runtime_error(id + " lives in the read-only store " +
                                 layers_[e->layer].u8string() + "; it cannot be removed from here");
    // Move aside first, so a crash never leaves a half-deleted entry that still lists; into a
    // staging folder locked while this run works, so that what a killed removal (or a read-only
    // folder it could not remove) leaves goes with the next run's clean_staging.
    clean_staging();
    std::optional<StagingFolder> staging;
    try {
        staging.emplace(*this, "remove");
    } catch (const fs::filesystem_error& x) {
        throw std::runtime_error("cannot remove " + e->entry_dir.u8string() + ": " +
                                 x.code().message());
    }
    std::error_code ec;
    fs::rename(e->entry_dir, staging->path() / "entry", ec);
    if (ec)
        throw std::runtime_error("cannot remove " + e->entry_dir.u8string() + ": " + ec.message());
    // An imported entry's files are not ours: the folder only holds the entry file (and an
    // assembled root's links). Removing it never follows links out of it; read-only folders of
    // an installed entry are made writable first.
    staging->remove();
    drop_views_of(kind, id);
}

void Store::drop_views_of(Kind kind, const std::string& id) const {
    std::error_code ec;
    for (fs::directory_iterator it(views_dir(), ec), end; !ec && it != end; it.increment(ec)) {
        // A view is named as its combination is (Resolved::active): TOOLKIT[+CUDNN][+ncclNCCL];
        // one without '+' is a toolkit's own (view.h).
        CombinationParts parts = combination_parts(it->path().filename().u8string());
        const std::string& part = kind == Kind::Cuda   ? parts.cuda
                                  : kind == Kind::Nccl ? parts.nccl
                                                       : parts.cudnn;
        if (part == id) {
            std::error_code ec2;
            fs::remove_all(it->path(), ec2);
        }
    }
}

} // namespace cvm
