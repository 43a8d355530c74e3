// Store::commit_entry (store.h), the one writer of an entry into the store's layout: a staged
// folder renamed into place, an entry there refused or replaced, the old one kept when the new
// one cannot move in, and what a killed run left in its way.
#include <catch2/catch.hpp>
#include <functional>

#include "store/entry_format.h"
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
