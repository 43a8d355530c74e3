// StoreInstaller (store_install.h) on a store in a temporary folder: an archive staged and moved
// into the store in one rename, a second install of the same id, what a killed install left, and
// failures that leave the store as it was; and the mirror and specs store_install.cpp decides.
#include "archive_builder.h"
#include "install/installed_files.h"
#include "spec/spec.h"
#include "install/sha256.h"
#include "install/store_install.h"
#include "platform/platform.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

using namespace cvm::install;
using namespace cvm::install::test;
namespace fs = std::filesystem;

namespace {

// A store with nothing in it, and a cuDNN 9.1 archive beside it.
struct StoreWithArchive {
    TempDir tmp;
    cvm::Store store{{tmp / "store"}};
    const std::string archive_name = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz";
    const std::string id = "9.1.0.70-cuda12";
    fs::path archive = tmp / archive_name;

    StoreWithArchive() {
        fs::create_directories(tmp / "store");
        ArchiveBuilder b;
        add_cudnn_tree(b, "cudnn-linux-x86_64-9.1.0.70_cuda12-archive/", 9, 1, 0, false, "lib/");
        b.write(archive, ArchiveBuilder::Format::TarXz);
    }

    StoreInstallerOptions options(bool reinstall = false) const {
        StoreInstallerOptions o;
        o.host_platform = "linux-x86_64";
        o.mirror = "file://" + (tmp / "no-mirror").string(); // nothing here is fetched
        o.reinstall = reinstall;
        return o;
    }

    // The names below `folder` of the store, sorted; none when it does not exist.
    std::vector<std::string> names_in(const fs::path& folder) const {
        std::vector<std::string> out;
        std::error_code ec;
        for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
            out.push_back(it->path().filename().string());
        std::sort(out.begin(), out.end());
        return out;
    }

    // Staging folders and their locks: what an install leaves of itself (nothing, when done).
    std::vector<std::string> staging_left() const {
        std::vector<std::string> out = names_in(store.staging_dir());
        for (const auto& name : names_in(store.locks_dir()))
            if (name.rfind("staging-", 0) == 0) out.push_back(name);
        return out;
    }
};

} // namespace

TEST_CASE("an archive is staged and moved into the store in one piece", "[store_install]") {
    StoreWithArchive s;
    StoreInstaller installer(s.store, s.options());
    InstallResult r = installer.install_file(s.archive);
    CHECK_FALSE(r.already_installed);
    CHECK(r.kind == cvm::Kind::Cudnn);
    CHECK(r.id == s.id);
    CHECK(r.path == s.tmp / "store" / "cudnn" / s.id / "root");
    CHECK_THAT(read_file(r.path / "include/cudnn_version.h"),
               Catch::Contains("#define CUDNN_MINOR 1"));
    CHECK(fs::read_symlink(r.path / "lib/libcudnn.so.9") == "libcudnn.so.9.1.0");

    auto entry = s.store.find(cvm::Kind::Cudnn, s.id);
    REQUIRE(entry);
    CHECK(entry->path == r.path);
    CHECK(entry->lib_dirs == std::vector<std::string>{"lib"});
    REQUIRE(entry->archives.size() == 1);
    CHECK(entry->archives[0].name == s.archive_name);
    CHECK(entry->archives[0].sha256 == sha256_file(s.archive));
    CHECK(entry->archives[0].url == fs::absolute(s.archive).u8string());
    // Beside root/: the entry and the record of its files, for `cvm verify`.
    CHECK(s.names_in(r.path.parent_path()) ==
          std::vector<std::string>{"entry", cvm::installed_files_name(), "root"});
    CHECK(s.staging_left().empty());
}

TEST_CASE("a second install of an id finds it installed; --reinstall replaces it",
          "[store_install]") {
    StoreWithArchive s;
    InstallResult first = StoreInstaller(s.store, s.options()).install_file(s.archive);
    write_file(first.path / "marker", "the first install's");

    // The same archive: known from its name and digest. Another file of the same contents:
    // extracted, recognised, and found in the store before anything is moved.
    fs::path renamed = s.tmp / "renamed.tar.xz";
    fs::copy_file(s.archive, renamed);
    for (const fs::path& archive : {s.archive, renamed}) {
        INFO(archive);
        InstallResult again = StoreInstaller(s.store, s.options()).install_file(archive);
        CHECK(again.already_installed);
        CHECK(again.id == s.id);
        CHECK(again.path == first.path);
        CHECK(fs::exists(first.path / "marker"));
        CHECK(s.staging_left().empty());
    }
    CHECK(s.names_in(s.tmp / "store" / "cudnn") == std::vector<std::string>{s.id});

    InstallResult replaced = StoreInstaller(s.store, s.options(true)).install_file(renamed);
    CHECK_FALSE(replaced.already_installed);
    CHECK(replaced.path == first.path);
    CHECK_FALSE(fs::exists(first.path / "marker"));
    auto entry = s.store.find(cvm::Kind::Cudnn, s.id);
    REQUIRE(entry);
    REQUIRE(entry->archives.size() == 1);
    CHECK(entry->archives[0].name == "renamed.tar.xz");
    CHECK(s.staging_left().empty()); // the old entry went with the staging folder
}

TEST_CASE("what a killed install left is removed; a running one's staging is kept",
          "[store_install]") {
    StoreWithArchive s;
    // A killed install: its staging folder, its lock no longer held; a read-only folder in it.
    const fs::path dead = s.store.staging_dir() / "install-4242-0123456789abcdef";
    write_file(dead / "x" / "lib" / "half.so", "half");
    fs::permissions(dead / "x" / "lib", fs::perms::owner_read | fs::perms::owner_exec);
    write_file(s.store.locks_dir() / "staging-install-4242-0123456789abcdef.lock", "");
    // A running one: its lock held (here, by this process).
    const fs::path live = s.store.staging_dir() / "install-4343-fedcba9876543210";
    write_file(live / "x" / "file", "in use");
    cvm::platform::FileLock held;
    REQUIRE(held.acquire(s.store.locks_dir() / "staging-install-4343-fedcba9876543210.lock", true));
    // Not an install's: left alone.
    write_file(s.store.staging_dir() / "notes" / "file", "other");
    // An interrupted removal: the entry's folder without its entry file is no install.
    const fs::path halfway = s.tmp / "store" / "cudnn" / s.id;
    write_file(halfway / "root" / "stale.h", "left by a removal");
    CHECK_FALSE(s.store.find(cvm::Kind::Cudnn, s.id));

    InstallResult r = StoreInstaller(s.store, s.options()).install_file(s.archive);
    CHECK_FALSE(r.already_installed);
    CHECK_FALSE(fs::exists(dead));
    CHECK_FALSE(fs::exists(s.store.locks_dir() / "staging-install-4242-0123456789abcdef.lock"));
    CHECK(read_file(live / "x" / "file") == "in use");
    CHECK(fs::exists(s.store.staging_dir() / "notes" / "file"));
    CHECK_FALSE(fs::exists(halfway / "root" / "stale.h"));
    CHECK(fs::is_regular_file(halfway / "entry"));
    CHECK(s.store.find(cvm::Kind::Cudnn, s.id));

    // Once its lock is let go, it is a killed install's too.
    held.release();
    StoreInstaller(s.store, s.options()).clean_staging();
    CHECK_FALSE(fs::exists(live));
    CHECK(s.names_in(s.store.staging_dir()) == std::vector<std::string>{"notes"});
}

TEST_CASE("a failed install leaves the store as it was", "[store_install]") {
    StoreWithArchive s;
    // Nothing cvm recognises: refused after the extraction, which goes with the staging folder.
    ArchiveBuilder junk;
    junk.file("README", "not a cuDNN\n");
    const fs::path junk_archive = s.tmp / "cudnn-linux-x86_64-9.1.0.70_cuda12-archive-copy.tar.xz";
    junk.write(junk_archive, ArchiveBuilder::Format::TarXz);
    CHECK(install_error_of([&] {
              StoreInstaller(s.store, s.options()).install_file(junk_archive);
          }) != "(no error)");
    CHECK(s.store.list(cvm::Kind::Cudnn).empty());
    CHECK(s.staging_left().empty());

    // The commit cannot make the kind's folder (a file stands there): nothing is left of the
    // install.
    write_file(s.tmp / "store" / "cudnn", "in the way");
    CHECK_THROWS(StoreInstaller(s.store, s.options()).install_file(s.archive));
    CHECK(read_file(s.tmp / "store" / "cudnn") == "in the way");
    CHECK(s.staging_left().empty());

    // A reinstall that fails keeps the entry it would have replaced.
    fs::remove(s.tmp / "store" / "cudnn");
    InstallResult first = StoreInstaller(s.store, s.options()).install_file(s.archive);
    write_file(first.path / "marker", "kept");
    CHECK(install_error_of([&] {
              StoreInstaller(s.store, s.options(true)).install_file(junk_archive);
          }) != "(no error)");
    CHECK(read_file(first.path / "marker") == "kept");
    CHECK(s.store.find(cvm::Kind::Cudnn, s.id));
    CHECK(s.staging_left().empty());
}

TEST_CASE("an install, a reinstall and an import go through the store's one writer",
          "[store_install]") {
    StoreWithArchive s;
    const fs::path entry_folder = s.tmp / "store" / "cudnn" / s.id;
    cvm::Entry imported;
    imported.kind = cvm::Kind::Cudnn;
    imported.id = s.id;
    imported.version = *cvm::parse_version("9.1.0.70");
    imported.cuda = *cvm::parse_version("12");
    imported.path = s.tmp / "elsewhere";
    imported.imported = true;

    // An interrupted removal stands in the way of both alike: it is no entry, and is replaced.
    write_file(entry_folder / "root" / "stale.h", "left by a removal");
    s.store.add_imported(imported);
    CHECK_FALSE(fs::exists(entry_folder / "root" / "stale.h"));
    REQUIRE(s.store.find(cvm::Kind::Cudnn, s.id));
    CHECK(s.store.find(cvm::Kind::Cudnn, s.id)->imported);

    // An install finds the import there; a reinstall replaces it, and an import replaces that.
    CHECK(StoreInstaller(s.store, s.options()).install_file(s.archive).already_installed);
    InstallResult r = StoreInstaller(s.store, s.options(true)).install_file(s.archive);
    CHECK_FALSE(r.already_installed);
    CHECK_FALSE(s.store.find(cvm::Kind::Cudnn, s.id)->imported);
    CHECK_THROWS_WITH(s.store.add_imported(imported), Catch::Contains("is already in the store"));
    s.store.add_imported(imported, true);
    CHECK(s.store.find(cvm::Kind::Cudnn, s.id)->imported);
    CHECK_FALSE(fs::exists(r.path / "include"));
    CHECK(s.staging_left().empty());
}

TEST_CASE("the mirror: CVM_MIRROR without its credentials or trailing slashes", "[store_install]") {
    const std::optional<std::string> saved = cvm::platform::get_env("CVM_MIRROR");
    cvm::platform::set_env("CVM_MIRROR", std::nullopt);
    CHECK(default_mirror() == "https://developer.download.nvidia.com/compute");
    cvm::platform::set_env("CVM_MIRROR", "");
    CHECK(default_mirror() == "https://developer.download.nvidia.com/compute");
    cvm::platform::set_env("CVM_MIRROR", "https://me:s3cret@mirror.store-test.example/nvidia//");
    CHECK(default_mirror() == "https://mirror.store-test.example/nvidia");
    cvm::platform::set_env("CVM_MIRROR", saved);
}

TEST_CASE("a spec names something to install", "[store_install]") {
    StoreWithArchive s;
    StoreInstaller installer(s.store, s.options());
    cvm::Spec system;
    system.system = true;
    CHECK_THAT(install_error_of([&] { installer.install_spec(system); }),
               Catch::Contains("\"system\" names nothing to install"));
    // A name is this machine's (import --as): nothing to fetch for it.
    const cvm::Spec named = cvm::parse_spec("debian+9");
    REQUIRE(named.name == "debian");
    CHECK_THAT(install_error_of([&] { installer.install_spec(named); }),
               Catch::Contains("no toolkit is named debian"));
    CHECK(s.staging_left().empty());
}
