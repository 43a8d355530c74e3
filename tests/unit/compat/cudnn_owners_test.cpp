// The owners of cuDNN files, their bytes checked: cvm's per-file record of an installed entry,
// dpkg's md5sums (a file altered after install, a copy under another release's name), and the
// commands that put an owner's files back.
#include <catch2/catch.hpp>

#include "compat/cudnn_owners.h"
#include "install/installed_files.h"
#include "store/entry_format.h"
#include "install/sha256.h"
#include "test_support.h"

using namespace cvm;
using namespace cvm::compat;
using cvm::test::TempDir;
using cvm::test::write_file;

TEST_CASE("a file of an installed cvm entry is known by its files record, and an altered one is not") {
    TempDir t("owners");
    fs::path entry_dir = t.path / "cudnn" / "9.19.0.56-cuda13";
    fs::path lib = entry_dir / "root" / "lib" / "libcudnn_heuristic.so.9";
    write_file(lib, "heuristic of 9.19");
    Entry e;
    e.kind = Kind::Cudnn;
    e.id = "9.19.0.56-cuda13";
    e.version = *parse_version("9.19.0.56");
    e.cuda = *parse_version("13");
    e.path = entry_dir / "root";
    e.lib_dirs = {"lib"};
    write_file(entry_dir / "entry", serialize_entry(e));
    InstalledFile f;
    f.path = "lib/libcudnn_heuristic.so.9";
    f.size = 17;
    f.sha256 = install::sha256_file(lib);
    write_file(entry_dir / installed_files_name(), serialize_installed_files({f}));

    OwnerRoots roots;
    roots.dpkg_dir = t.path / "no-dpkg";
    OwnerLookup found = owner_of(lib, lib.u8string(), roots);
    REQUIRE(found.owner);
    CHECK(found.owner->kind == FileOwner::Kind::Cvm);
    CHECK(found.owner->who() == "cvm 9.19.0.56-cuda13");
    CHECK(found.owner->version->str() == "9.19.0.56");
    CHECK(found.owner->reinstall() == "cvm install --reinstall 9.19.0.56-cuda13");
    CHECK_FALSE(found.replaced);

    fs::path altered = entry_dir / "root" / "lib" / "libcudnn_cnn.so.9";
    write_file(altered, "cnn of 9.19");
    f.path = "lib/libcudnn_cnn.so.9";
    f.size = 11;
    f.sha256 = std::string(64, '0');
    write_file(entry_dir / installed_files_name(), serialize_installed_files({f}));
    found = owner_of(altered, altered.u8string(), roots);
    CHECK_FALSE(found.owner);
    REQUIRE(found.replaced);
    CHECK(found.replaced->name == "9.19.0.56-cuda13");
}

TEST_CASE("dpkg: a package's file is checked against md5sums, and a copy is found under another name") {
    TempDir t("owners-dpkg");
    fs::path sys = t.path / "usr" / "lib";
    fs::path real = sys / "libcudnn_engines_precompiled.so.9.14.0";
    write_file(real, "engines of 9.14");
    std::string rel = real.u8string().substr(1);
    fs::path dpkg = t.path / "dpkg";
    write_file(dpkg / "info" / "libcudnn9-cuda-12:amd64.list", "/.\n" + real.u8string() + "\n");
    write_file(dpkg / "info" / "libcudnn9-cuda-12:amd64.md5sums",
               install::file_digest(real, install::Sha256::Algorithm::Md5) + "  " + rel + "\n");
    write_file(dpkg / "status", "Package: other\nVersion: 1.0\n\nPackage: libcudnn9-cuda-12\n"
                                "Status: install ok installed\nVersion: 9.14.0.64-1\n\n");
    OwnerRoots roots;
    roots.dpkg_dir = dpkg;

    OwnerLookup found = owner_of(real, real.u8string(), roots);
    REQUIRE(found.owner);
    CHECK(found.owner->hash_checked);
    CHECK(found.owner->version->str() == "9.14.0.64");
    CHECK(found.owner->reinstall() == "apt-get install --reinstall libcudnn9-cuda-12");

    // A copy named by its soname elsewhere: the same library, the same bytes.
    fs::path copy = t.path / "mixed" / "libcudnn_engines_precompiled.so.9";
    write_file(copy, "engines of 9.14");
    CHECK_FALSE(owner_of(copy, copy.u8string(), roots).owner);
    auto from = copied_from(copy, roots);
    REQUIRE(from);
    CHECK(from->copy);
    CHECK(from->describe() == "dpkg libcudnn9-cuda-12, a copy of " + real.u8string());
    // Other bytes, or another library's name: no copy.
    write_file(copy, "engines of 9.19.0");
    CHECK_FALSE(copied_from(copy, roots));
    fs::path other = t.path / "mixed" / "libcudnn_heuristic.so.9";
    write_file(other, "engines of 9.14");
    CHECK_FALSE(copied_from(other, roots));

    // The package's file altered after install.
    write_file(real, "engines of 9.14, altered");
    found = owner_of(real, real.u8string(), roots);
    CHECK_FALSE(found.owner);
    REQUIRE(found.replaced);
    CHECK(found.replaced->name == "libcudnn9-cuda-12");
}

TEST_CASE("a wheel's files are put back by pip with the distribution's name") {
    FileOwner o;
    o.kind = FileOwner::Kind::Wheel;
    o.name = "nvidia_cudnn_cu12";
    o.version_text = "9.19.0.56";
    CHECK(o.reinstall() == "pip install --force-reinstall --no-deps nvidia-cudnn-cu12==9.19.0.56");
    CHECK(o.describe() == "wheel nvidia_cudnn_cu12");
}
