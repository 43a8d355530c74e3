#include <catch2/catch.hpp>

#include "layouts/nccl_layouts.h"
#include "test_support.h"

using namespace cvm;
using cvm::test::TempDir;
using cvm::test::write_file;

namespace {

// A library file carrying NCCL's banner, as NVIDIA's libnccl.so.2.X.Y does (the readers take any
// file that is not ELF whole).
void nccl_lib(const fs::path& lib_dir, const std::string& version, const std::string& cuda) {
    write_file(lib_dir / ("libnccl.so." + version), std::string("\x7f"
                                                                "ZZZ junk\0",
                                                                10) +
                                                        "NCCL version " + version +
                                                        (cuda.empty() ? "" : "+cuda" + cuda) +
                                                        std::string("\0more", 5));
    fs::create_symlink("libnccl.so." + version, lib_dir / "libnccl.so.2");
    fs::create_symlink("libnccl.so.2", lib_dir / "libnccl.so");
}

void nccl_header(const fs::path& include_dir, const std::string& version) {
    auto a = version.find('.'), b = version.rfind('.');
    write_file(include_dir / "nccl.h", "#define NCCL_MAJOR " + version.substr(0, a) +
                                           "\n#define NCCL_MINOR " +
                                           version.substr(a + 1, b - a - 1) +
                                           "\n#define NCCL_PATCH " + version.substr(b + 1) + "\n");
}

// NVIDIA's archive extracted: nccl_2.21.5-1+cuda12.4_x86_64/{include,lib}.
fs::path extracted_archive(const fs::path& parent, const std::string& version = "2.21.5",
                           const std::string& cuda = "12.4") {
    fs::path root = parent / ("nccl_" + version + "-1+cuda" + cuda + "_x86_64");
    fs::create_directories(root / "lib");
    nccl_lib(root / "lib", version, cuda);
    nccl_header(root / "include", version);
    write_file(root / "include" / "nccl_net.h", "net\n");
    write_file(root / "lib" / "pkgconfig" / "nccl.pc", "Name: nccl\n");
    write_file(root / "LICENSE.txt", "license\n");
    return root;
}

} // namespace

TEST_CASE("NCCL import: an extracted archive is its own root; the library says the release") {
    TempDir t;
    fs::path root = extracted_archive(t.path);
    auto got = nccl_import_of(root, platform::Os::Linux, std::nullopt);
    REQUIRE(got);
    const Entry& e = got->entry;
    CHECK(e.kind == Kind::Nccl);
    CHECK(e.id == "2.21.5-cuda12.4");
    CHECK(e.imported);
    CHECK(e.path == root);
    CHECK(e.origin.empty());
    CHECK(got->plan.empty());
    CHECK(e.lib_dirs == std::vector<std::string>{"lib"});
    CHECK(e.include_dirs == std::vector<std::string>{"include"});
    CHECK(e.note.find("NCCL version 2.21.5+cuda12.4") != std::string::npos);
    CHECK(got->warning.empty());
    // Reached from the folder it was extracted into.
    auto above = nccl_import_of(t.path, platform::Os::Linux, std::nullopt);
    REQUIRE(above);
    CHECK(above->entry.path == root);
    // Windows has no NCCL.
    CHECK_FALSE(nccl_import_of(root, platform::Os::Windows, std::nullopt));
}

TEST_CASE("NCCL import: a name, a header or --cuda that contradicts the library") {
    TempDir t;
    fs::path root = extracted_archive(t.path);
    // A folder named for another release: the library wins, with a warning.
    fs::rename(root, t.path / "nccl_2.20.3-1+cuda12.4_x86_64");
    auto renamed =
        nccl_import_of(t.path / "nccl_2.20.3-1+cuda12.4_x86_64", platform::Os::Linux, std::nullopt);
    REQUIRE(renamed);
    CHECK(renamed->entry.version.str() == "2.21.5");
    CHECK(renamed->warning.find("the folder's name says NCCL 2.20.3") != std::string::npos);
    // nccl.h of another release.
    TempDir u;
    fs::path other = extracted_archive(u.path);
    nccl_header(other / "include", "2.19.3");
    auto header = nccl_import_of(other, platform::Os::Linux, std::nullopt);
    REQUIRE(header);
    CHECK(header->warning.find("nccl.h is NCCL 2.19.3") != std::string::npos);
    CHECK(header->entry.note.find("warning: ") != std::string::npos);
    // --cuda of another major than the library's is refused; of the same major it changes nothing.
    CHECK_THROWS_AS(nccl_import_of(other, platform::Os::Linux, Version{{13}}), NcclCudaConflict);
    CHECK_THROWS_WITH(nccl_import_of(other, platform::Os::Linux, Version{{13}}),
                      Catch::Contains("rerun with --cuda 12 or without --cuda"));
    CHECK(nccl_import_of(other, platform::Os::Linux, Version{{12}})->entry.id == "2.21.5-cuda12.4");
}

TEST_CASE("NCCL import: a library that does not say its CUDA needs a record or --cuda") {
    TempDir t;
    fs::path root = t.path / "old";
    fs::create_directories(root / "lib");
    nccl_lib(root / "lib", "2.4.8", "");
    CHECK_THROWS_WITH(nccl_import_of(root, platform::Os::Linux, std::nullopt),
                      Catch::Contains("cannot tell which CUDA the NCCL 2.4.8"));
    CHECK(nccl_import_of(root, platform::Os::Linux, Version{{10, 1}})->entry.id ==
          "2.4.8-cuda10.1");
    // Neither the library nor a header says the release: refused.
    TempDir u;
    write_file(u.path / "lib" / "libnccl.so.2", "no banner here");
    CHECK_THROWS_WITH(nccl_import_of(u.path, platform::Os::Linux, Version{{12}}),
                      Catch::Contains("does not say which NCCL it is"));
    // A header alone gives the release (said so).
    nccl_header(u.path / "include", "2.18.3");
    auto from_header = nccl_import_of(u.path, platform::Os::Linux, Version{{12, 1}});
    REQUIRE(from_header);
    CHECK(from_header->entry.id == "2.18.3-cuda12.1");
    CHECK(from_header->entry.note.find("its library does not say") != std::string::npos);
}

TEST_CASE("NCCL import: a wheel from its site-packages, nvidia/ or nvidia/nccl") {
    TempDir t;
    fs::path site = t.path / "site-packages";
    fs::path nccl = site / "nvidia" / "nccl";
    fs::create_directories(nccl / "lib");
    nccl_lib(nccl / "lib", "2.28.9", "13.0");
    nccl_header(nccl / "include", "2.28.9");
    write_file(nccl / "__init__.py", "");
    fs::create_directories(site / "nvidia_nccl_cu13-2.28.9.dist-info");
    write_file(site / "nvidia_nccl_cu13-2.28.9.dist-info" / "RECORD",
               "nvidia/nccl/include/nccl.h,sha256=x,1\nnvidia/nccl/__init__.py,sha256=y,0\n");
    for (const fs::path& dir : {site, site / "nvidia", nccl}) {
        INFO(dir);
        auto got = nccl_import_of(dir, platform::Os::Linux, std::nullopt);
        REQUIRE(got);
        CHECK(got->entry.id == "2.28.9-cuda13.0");
        CHECK(got->entry.path == nccl);
        CHECK(got->plan.empty());
    }
    // A wheel whose library does not say its CUDA: the dist-info's cu13 does.
    fs::remove(nccl / "lib" / "libnccl.so.2");
    fs::remove(nccl / "lib" / "libnccl.so");
    fs::remove(nccl / "lib" / "libnccl.so.2.28.9");
    nccl_lib(nccl / "lib", "2.28.9", "");
    auto got = nccl_import_of(site, platform::Os::Linux, std::nullopt);
    REQUIRE(got);
    CHECK(got->entry.id == "2.28.9-cuda13");
    CHECK(got->entry.note.find("nvidia_nccl_cu13") != std::string::npos);
}

TEST_CASE("NCCL import: NVIDIA's apt packages in /usr get an assembled root of NCCL's files only") {
    TempDir t;
    fs::path usr = t.path / "usr";
    fs::path lib = usr / "lib" / "x86_64-linux-gnu";
    fs::create_directories(lib);
    nccl_lib(lib, "2.28.3", "");
    write_file(lib / "libz.so.1", "not NCCL");
    nccl_header(usr / "include", "2.28.3");
    write_file(usr / "include" / "stdio.h", "not NCCL");
    // NCCL 2.28's device API: nccl_device.h includes from the folder nccl_device/, taken whole.
    write_file(usr / "include" / "nccl_device" / "impl" / "barrier__funcs.h", "// barrier");
    write_file(usr / "include" / "netinet" / "in.h", "not NCCL");
    write_file(
        t.path / "var" / "lib" / "dpkg" / "status",
        "Package: libnccl2\nStatus: install ok installed\nVersion: 2.28.3-1+cuda13.0\n\n"
        "Package: libnccl-dev\nStatus: install ok installed\nVersion: 2.28.3-1+cuda13.0\n\n");
    CHECK(has_system_nccl(usr));
    auto got = nccl_import_of(usr, platform::Os::Linux, std::nullopt);
    REQUIRE(got);
    const Entry& e = got->entry;
    CHECK(e.id == "2.28.3-cuda13.0");
    CHECK(e.origin == usr);
    CHECK(e.lib_dirs == std::vector<std::string>{"lib"});
    CHECK(e.include_dirs == std::vector<std::string>{"include"});
    CHECK(e.note.find("dpkg's package libnccl2") != std::string::npos);
    std::vector<std::string> links;
    for (const auto& l : got->plan)
        links.push_back(l.rel);
    std::sort(links.begin(), links.end());
    CHECK(links == std::vector<std::string>{"include/nccl.h", "include/nccl_device", "lib/libnccl.so",
                                            "lib/libnccl.so.2", "lib/libnccl.so.2.28.3"});
    // A header folder that links out of /usr is refused, naming it.
    fs::remove_all(usr / "include" / "nccl_device");
    write_file(t.path / "elsewhere" / "impl" / "x.h", "x");
    fs::create_directory_symlink(t.path / "elsewhere", usr / "include" / "nccl_device");
    CHECK_THROWS_WITH(nccl_import_of(usr, platform::Os::Linux, std::nullopt),
                      Catch::Contains("nccl_device is a link out of " + usr.u8string()));
}

TEST_CASE("NCCL import: a wheel pip left half-installed is refused") {
    TempDir t;
    fs::path site = t.path / "site-packages";
    fs::path nccl = site / "nvidia" / "nccl";
    nccl_lib(nccl / "lib", "2.28.9", "13.0");
    nccl_header(nccl / "include", "2.28.9");
    fs::path info = site / "nvidia_nccl_cu13-2.28.9.dist-info";
    fs::create_directories(info);
    CHECK_THROWS_WITH(nccl_import_of(site, platform::Os::Linux, std::nullopt),
                      Catch::Contains("nvidia_nccl_cu13-2.28.9.dist-info in " + site.u8string() +
                                      " is half-installed: it has no readable RECORD") &&
                          Catch::Contains("pip install --force-reinstall nvidia-nccl-cu13==2.28.9"));
    write_file(info / "RECORD", "nvidia/nccl/include/nccl.h,sha256=x,1\n"
                                "nvidia/nccl/include/nccl_device/ptr.h,sha256=y,2\n"
                                "nvidia_nccl_cu13-2.28.9.dist-info/RECORD,,\n");
    CHECK_THROWS_WITH(nccl_import_of(site, platform::Os::Linux, std::nullopt),
                      Catch::Contains("its RECORD names nvidia/nccl/include/nccl_device/ptr.h, which is not there"));
    // Whole again: the wheel's folder is NCCL's own, header folders and all, linked as it is.
    write_file(nccl / "include" / "nccl_device" / "ptr.h", "// ptr");
    auto got = nccl_import_of(site, platform::Os::Linux, std::nullopt);
    REQUIRE(got);
    CHECK(got->entry.path == nccl);
    CHECK(got->plan.empty());
}

TEST_CASE("NCCL import: a toolkit or conda environment holding NCCL among other libraries") {
    TempDir t;
    fs::path env = t.path / "env";
    fs::create_directories(env / "lib");
    nccl_lib(env / "lib", "2.21.5", "");
    write_file(env / "lib" / "libpython3.so", "python");
    nccl_header(env / "include", "2.21.5");
    write_file(env / "conda-meta" / "nccl-2.21.5.1-h6103f9b_0.json",
               R"({"name": "nccl", "depends": ["cuda-version >=12,<13.0a0", "libgcc-ng"]})");
    auto got = nccl_import_of(env, platform::Os::Linux, std::nullopt);
    REQUIRE(got);
    CHECK(got->entry.id == "2.21.5-cuda12");
    CHECK(got->entry.origin == env);
    CHECK_FALSE(got->plan.empty());
    CHECK(got->entry.note.find("conda-meta") != std::string::npos);
    // Nothing of NCCL: nothing to import.
    TempDir u;
    write_file(u.path / "lib" / "libcudart.so.12", "cudart");
    CHECK_FALSE(nccl_import_of(u.path, platform::Os::Linux, std::nullopt));
}

TEST_CASE("NCCL names: archives and wheels say version, CUDA and platform") {
    auto a = nccl_info_from_name("nccl_2.21.5-1+cuda12.4_x86_64.txz");
    REQUIRE(a);
    CHECK(a->version.str() == "2.21.5");
    CHECK(a->cuda->str() == "12.4");
    CHECK(a->platform == "linux-x86_64");
    CHECK(nccl_info_from_name("nccl_2.5.6-2+cuda10.2_x86_64")->version.str() == "2.5.6");
    CHECK(nccl_info_from_name("nccl_2.28.9-1+cuda13.0_aarch64.txz")->platform == "linux-sbsa");
    auto w = nccl_info_from_name("nvidia_nccl_cu12-2.21.5.dist-info");
    REQUIRE(w);
    CHECK(w->cuda->str() == "12");
    CHECK(w->version.str() == "2.21.5");
    CHECK_FALSE(nccl_info_from_name("nccl_2.21-1+cuda12.4_x86_64.txz"));
    CHECK_FALSE(nccl_info_from_name("cudnn-linux-x86_64-9.1.0.70_cuda12-archive"));
    auto dpkg =
        nccl_packages_from_dpkg_status("Package: libnccl2\nStatus: install ok installed\n"
                                       "Version: 2.21.5-1+cuda12.4\n\n"
                                       "Package: libnccl2\nStatus: deinstall ok config-files\n"
                                       "Version: 2.18.1-1+cuda12.1\n");
    REQUIRE(dpkg.size() == 1);
    CHECK(dpkg[0].version.str() == "2.21.5");
    CHECK(dpkg[0].cuda.str() == "12.4");
}
