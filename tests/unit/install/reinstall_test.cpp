// reinstall (reinstall.h): the source an installed entry is installed again from, and the
// entries it refuses, with the exit code each refusal has.
#include "archive_builder.h"
#include "install/error.h"
#include "install/reinstall.h"
#include "install/store_install.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <string>

using namespace cvm::install;
using namespace cvm::install::test;
namespace fs = std::filesystem;

namespace {

StoreInstallerOptions reinstall_options(const fs::path& tmp) {
    StoreInstallerOptions o;
    o.host_platform = "linux-x86_64";
    o.mirror = "file://" + (tmp / "no-mirror").string(); // nothing here is fetched
    o.reinstall = true;
    return o;
}

// The exit code of the InstallError `f` throws; 0 when it throws none.
int reinstall_exit_code(const std::function<void()>& f) {
    try {
        f();
    } catch (const InstallError& e) {
        return e.exit_code();
    }
    return 0;
}

} // namespace

TEST_CASE("reinstall installs an entry again from the archive it came from", "[reinstall]") {
    TempDir tmp;
    cvm::Store store{{tmp / "store"}};
    fs::create_directories(tmp / "store");
    const fs::path archive = tmp / "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz";
    ArchiveBuilder b;
    add_cudnn_tree(b, "cudnn-linux-x86_64-9.1.0.70_cuda12-archive/", 9, 1, 0, false, "lib/");
    b.write(archive, ArchiveBuilder::Format::TarXz);
    const std::string id = "9.1.0.70-cuda12";
    StoreInstaller installer(store, reinstall_options(tmp.path));

    CHECK_THAT(install_error_of([&] { reinstall(installer, store, "not-an-id"); }),
               Catch::Contains("is not a toolkit id"));
    CHECK(reinstall_exit_code([&] { reinstall(installer, store, id); }) == 2);
    CHECK_THAT(install_error_of([&] { reinstall(installer, store, id); }),
               Catch::Contains("cudnn " + id + " is not installed; run `cvm install " + id + "`"));

    InstallResult first = installer.install_file(archive);
    write_file(first.path / "marker", "the first install's");
    InstallResult again = reinstall(installer, store, id);
    CHECK_FALSE(again.already_installed);
    CHECK_FALSE(fs::exists(first.path / "marker"));

    // The archive changed since: refused, the entry kept as it is (exit code 1).
    write_file(archive, "not the archive any more");
    CHECK(reinstall_exit_code([&] { reinstall(installer, store, id); }) == 1);
    CHECK_THAT(install_error_of([&] { reinstall(installer, store, id); }),
               Catch::Contains("is no longer the archive " + id + " was installed from"));
    fs::remove(archive);
    CHECK_THAT(install_error_of([&] { reinstall(installer, store, id); }),
               Catch::Contains("which is gone"));
    CHECK(store.find(cvm::Kind::Cudnn, id));
}
