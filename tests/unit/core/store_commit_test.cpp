// Store::commit_entry (store.h), the one writer of an entry into the store's layout: a staged
// folder renamed into place, an entry there refused or replaced, the old one kept when the new
// one cannot move in, and what a killed run left in its way; the locked staging folders of
// imports and removals (staging_folder.h) and Store::clean_staging.
#include <catch2/catch.hpp>
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "store/entry_format.h"
#include "store/staging_folder.h"
#include "store/store.h"
#include "entries.h"
#include "test_support.h"

using namespace cvm;
using cvm::test::read_file;
using cvm::test::TempDir;
using cvm::test::write_file;

namespace {

// A staged entry as an import stages it: the entry file, and a marker below root/.
fs::path stage_commit(const fs::path& folder, const Entry& e, const std::string& marker) {
    write_file(folder / "entry", serialize_entry(e));
    write_file(folder / "root" / "marker", marker);
    return folder;
}

EntryCommitError::Step commit_step_of(const std::function<void()>& commit) {
    try {
        commit();
    } catch (const EntryCommitError& e) {
        return e.step();
    }
    FAIL("commit_entry did not refuse");
    return EntryCommitError::Step::Occupied;
}

} // namespace

TEST_CASE("commit_entry renames a staged folder into the store's layout") {
    TempDir t("commit");
    Store store({t.path / "root"});
    Entry e = cvm::test::cudnn_entry("9.1.0.70-cuda12", t.path / "cudnn");
    fs::path staged = stage_commit(store.staging_dir() / "s", e, "new");
    fs::path target = store.commit_entry(e.kind, e.id, staged, store.staging_dir() / "old", false);
    CHECK(target == t.path / "root" / "cudnn" / e.id);
    CHECK(read_file(target / "root" / "marker") == "new");
    CHECK_FALSE(fs::exists(staged));
    CHECK(store.find(e.kind, e.id));
}

TEST_CASE("commit_entry refuses an entry there, or replaces it and removes the old one after") {
    TempDir t("commit");
    Store store({t.path / "root"});
    Entry e = cvm::test::cudnn_entry("9.1.0.70-cuda12", t.path / "cudnn");
    const fs::path aside = store.staging_dir() / "old";
    fs::path target = store.commit_entry(
        e.kind, e.id, stage_commit(store.staging_dir() / "a", e, "first"), aside, false);

    fs::path second = stage_commit(store.staging_dir() / "b", e, "second");
    CHECK(commit_step_of([&] { store.commit_entry(e.kind, e.id, second, aside, false); }) ==
          EntryCommitError::Step::Occupied);
    CHECK(read_file(target / "root" / "marker") == "first");
    CHECK(fs::exists(second)); // the caller's to remove

    store.commit_entry(e.kind, e.id, second, aside, true);
    CHECK(read_file(target / "root" / "marker") == "second");
    CHECK_FALSE(fs::exists(aside));
}

TEST_CASE("commit_entry keeps the old entry when the new one cannot move in") {
    TempDir t("commit");
    Store store({t.path / "root"});
    Entry e = cvm::test::cudnn_entry("9.1.0.70-cuda12", t.path / "cudnn");
    const fs::path aside = store.staging_dir() / "old";
    fs::path target = store.commit_entry(
        e.kind, e.id, stage_commit(store.staging_dir() / "a", e, "kept"), aside, false);
    // A staged folder that is not there: the rename fails after the old entry was moved aside.
    CHECK(commit_step_of([&] {
              store.commit_entry(e.kind, e.id, store.staging_dir() / "missing", aside, true);
          }) == EntryCommitError::Step::MoveIn);
    CHECK(read_file(target / "root" / "marker") == "kept");
    CHECK(store.find(e.kind, e.id));
    CHECK_FALSE(fs::exists(aside));
}

TEST_CASE("commit_entry goes past what a killed run left") {
    TempDir t("commit");
    Store store({t.path / "root"});
    Entry e = cvm::test::cudnn_entry("9.1.0.70-cuda12", t.path / "cudnn");
    const fs::path target = t.path / "root" / "cudnn" / e.id;
    const fs::path aside = store.staging_dir() / "old";

    // A staged folder never committed lists nothing.
    stage_commit(store.staging_dir() / "killed", e, "never committed");
    CHECK_FALSE(store.find(e.kind, e.id));

    // An interrupted removal: the entry's folder without its entry file is no entry.
    write_file(target / "root" / "stale.h", "left by a removal");
    store.commit_entry(e.kind, e.id, stage_commit(store.staging_dir() / "a", e, "first"), aside,
                       false);
    CHECK_FALSE(fs::exists(target / "root" / "stale.h"));
    CHECK(read_file(target / "root" / "marker") == "first");

    // A replacing run killed after it moved the old entry aside: its leftover, a read-only
    // folder among it, does not stand in the way of the next one.
    write_file(aside / "root" / "lib" / "old.so", "old");
    fs::permissions(aside / "root" / "lib", fs::perms::owner_read | fs::perms::owner_exec);
    store.commit_entry(e.kind, e.id, stage_commit(store.staging_dir() / "b", e, "second"), aside,
                       true);
    CHECK(read_file(target / "root" / "marker") == "second");
    CHECK_FALSE(fs::exists(aside));
}

namespace {

// The names in the store's staging folder, sorted.
std::vector<std::string> staged_names(const Store& store) {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(store.staging_dir(), ec), end; !ec && it != end;
         it.increment(ec))
        out.push_back(it->path().filename().u8string());
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

TEST_CASE("clean_staging removes what killed imports and removals left, never a running one's") {
    TempDir t("commit");
    Store store({t.path / "root"});
    Entry e = cvm::test::cudnn_entry("9.1.0.70-cuda12", t.path / "cudnn");
    // A killed import: its folder, its lock no longer held; a read-only folder in it. A killed
    // removal, and an import of an older cvm, which took no lock.
    const fs::path dead = store.staging_dir() / "import-4242-0123456789abcdef";
    stage_commit(dead / "entry", e, "half imported");
    fs::permissions(dead / "entry" / "root", fs::perms::owner_read | fs::perms::owner_exec);
    write_file(store.locks_dir() / "staging-import-4242-0123456789abcdef.lock", "");
    write_file(store.staging_dir() / "remove-4242-fedcba9876543210" / "entry" / "entry", "");
    write_file(store.staging_dir() / "import-4141-9.1.0.70-cuda12.old" / "entry", "");
    // A running import: its staging folder, locked for as long as it lives.
    StagingFolder running(store, "import");
    write_file(running.path() / "entry" / "entry", "in use");
    // A merged view being built: not locked, so never taken for a killed run's.
    write_file(store.staging_dir() / "view-4242-12.4.1" / "bin" / "nvcc", "");

    store.clean_staging();
    CHECK(staged_names(store) ==
          std::vector<std::string>{running.path().filename().u8string(), "view-4242-12.4.1"});
    CHECK_FALSE(fs::exists(store.locks_dir() / "staging-import-4242-0123456789abcdef.lock"));
    CHECK(read_file(running.path() / "entry" / "entry") == "in use");

    // An import cleans first; once done, its own folder and lock are gone too.
    write_file(store.staging_dir() / "import-4343-00000000deadbeef" / "entry" / "entry", "");
    store.add_imported(e);
    CHECK(store.find(e.kind, e.id));
    CHECK(staged_names(store) ==
          std::vector<std::string>{running.path().filename().u8string(), "view-4242-12.4.1"});

    // Once its run is over, the running one's goes as well.
    const fs::path lock =
        store.locks_dir() / ("staging-" + running.path().filename().u8string() + ".lock");
    CHECK(fs::exists(lock));
    running.remove();
    CHECK_FALSE(fs::exists(lock));
    CHECK(staged_names(store) == std::vector<std::string>{"view-4242-12.4.1"});
}

TEST_CASE("remove leaves nothing staged, read-only folders of an installed entry included") {
    TempDir t("commit");
    Store store({t.path / "root"});
    Entry e = cvm::test::cudnn_entry("9.1.0.70-cuda12", t.path / "cudnn");
    e.imported = false;
    fs::path target =
        store.commit_entry(e.kind, e.id, stage_commit(store.staging_dir() / "a", e, "installed"),
                           store.staging_dir() / "old", false);
    write_file(target / "root" / "lib" / "libcudnn.so.9", "library");
    fs::permissions(target / "root" / "lib", fs::perms::owner_read | fs::perms::owner_exec);
    // What a killed removal left is cleared by the next one.
    write_file(store.staging_dir() / "remove-4242-0123456789abcdef" / "entry" / "entry", "");

    store.remove(e.kind, e.id);
    CHECK_FALSE(store.find(e.kind, e.id));
    CHECK_FALSE(fs::exists(target));
    CHECK(staged_names(store).empty());
}
