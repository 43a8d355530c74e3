#include <catch2/catch.hpp>

#include "layouts/cudnn_layouts.h"
#include "test_support.h"

using namespace cvm;
using cvm::test::cudnn_version_header;
using cvm::test::TempDir;
using cvm::test::write_file;

namespace {

// NVIDIA's apt packages of cuDNN 9.14.0.64 for CUDA 13 under <root>/usr, with dpkg's record.
fs::path make_apt_cudnn(const fs::path& root, bool with_dpkg = true) {
    fs::path usr = root / "usr";
    fs::path lib = usr / "lib" / "x86_64-linux-gnu";
    fs::path inc = usr / "include" / "x86_64-linux-gnu";
    write_file(inc / "cudnn_v9.h", "#include <cudnn_version_v9.h>\n");
    write_file(inc / "cudnn_version_v9.h", cudnn_version_header(9, 14, 0));
    write_file(inc / "cudnn_ops_v9.h", "ops\n");
    fs::create_directories(root / "etc" / "alternatives");
    fs::create_symlink(inc / "cudnn_v9.h", root / "etc" / "alternatives" / "libcudnn");
    fs::create_symlink(root / "etc" / "alternatives" / "libcudnn", usr / "include" / "cudnn.h");
    write_file(usr / "include" / "stdio.h", "not cuDNN\n");
    for (const char* sub : {"", "_ops", "_cnn", "_engines_precompiled"}) {
        std::string base = std::string("libcudnn") + sub + ".so";
        write_file(lib / (base + ".9.14.0"), "elf");
        fs::create_symlink(base + ".9.14.0", lib / (base + ".9"));
    }
    fs::create_symlink("libcudnn.so.9", lib / "libcudnn.so");
    write_file(lib / "libz.so.1.2.13", "not cuDNN");
    if (with_dpkg)
        write_file(root / "var" / "lib" / "dpkg" / "status",
                   "Package: zlib1g\nStatus: install ok installed\nVersion: 1:1.2.13\n\n"
                   "Package: libcudnn9-cuda-13\nStatus: install ok installed\nArchitecture: amd64\n"
                   "Version: 9.14.0.64-1\nDescription: cuDNN runtime\n libraries\n\n"
                   "Package: libcudnn9-dev-cuda-13\nStatus: install ok installed\nVersion: 9.14.0.64-1\n");
    return usr;
}

bool planned(const CudnnImport& imp, const std::string& rel) {
    for (const auto& l : imp.plan)
        if (l.rel == rel) return true;
    return false;
}

} // namespace

TEST_CASE("dpkg status: cuDNN packages, their builds and CUDA variants") {
    auto pkgs = cudnn_packages_from_dpkg_status(
        "Package: libcudnn9-cuda-13\nStatus: install ok installed\nVersion: 9.14.0.64-1\n\n"
        "Package: libcudnn8\nStatus: install ok installed\nVersion: 8.9.7.29-1+cuda12.2\n\n"
        "Package: libcudnn8-dev\nStatus: install ok installed\nVersion: 8.9.7.29-1+cuda12.2\n\n"
        "Package: libcudnn8\nStatus: deinstall ok config-files\nVersion: 8.1.0.77-1+cuda11.2\n\n"
        "Package: libcudnn7\nStatus: install ok installed\nVersion: 7.6.5.32-1+cuda10.2\n");
    REQUIRE(pkgs.size() == 3);
    CHECK(pkgs[0].package == "libcudnn9-cuda-13");
    CHECK(CudnnId{pkgs[0].version, pkgs[0].cuda}.str() == "9.14.0.64-cuda13");
    CHECK(CudnnId{pkgs[1].version, pkgs[1].cuda}.str() == "8.9.7.29-cuda12");
    CHECK(CudnnId{pkgs[2].version, pkgs[2].cuda}.str() == "7.6.5.32-cuda10.2"); // per-minor build
}

TEST_CASE("cuDNN import: NVIDIA's apt packages get an assembled root of de-versioned links") {
    TempDir t("apt");
    fs::path usr = make_apt_cudnn(t.path);
    CHECK(has_system_cudnn(usr));
    auto imp = cudnn_import_of(usr, platform::Os::Linux, std::nullopt, std::nullopt);
    REQUIRE(imp);
    CHECK(imp->entry.id == "9.14.0.64-cuda13");
    CHECK(imp->entry.origin == usr);
    CHECK(imp->entry.lib_dirs == std::vector<std::string>{"lib"});
    CHECK(imp->warning.empty());
    CHECK(planned(*imp, "include/cudnn.h"));
    CHECK(planned(*imp, "include/cudnn_version.h"));
    CHECK(planned(*imp, "include/cudnn_ops.h"));
    CHECK_FALSE(planned(*imp, "include/stdio.h"));
    CHECK(planned(*imp, "lib/libcudnn.so.9.14.0"));
    CHECK(planned(*imp, "lib/libcudnn_engines_precompiled.so.9"));
    CHECK(planned(*imp, "lib/libcudnn.so"));
    CHECK_FALSE(planned(*imp, "lib/libz.so.1.2.13"));
    CHECK(imp->entry.stamp.find("libcudnn.so.9.14.0") != std::string::npos);
    // The root built from the plan reads as an ordinary cuDNN root.
    build_assembled_root(t.path / "root", imp->plan);
    CHECK(platform::read_file(t.path / "root" / "include" / "cudnn_version.h") ==
          cudnn_version_header(9, 14, 0));
}

TEST_CASE("cuDNN import: without dpkg's record the library names give 3 numbers and --cuda is needed") {
    TempDir t("aptnodpkg");
    fs::path usr = make_apt_cudnn(t.path, false);
    try {
        cudnn_import_of(usr, platform::Os::Linux, std::nullopt, std::nullopt);
        FAIL("expected an error");
    } catch (const CudnnImportError& e) {
        std::string what = e.what();
        CHECK(what.find("x86_64-linux-gnu") != std::string::npos);
        CHECK(what.find("--cuda") != std::string::npos);
    }
    auto imp = cudnn_import_of(usr, platform::Os::Linux, Version{{13}}, std::nullopt);
    REQUIRE(imp);
    CHECK(imp->entry.id == "9.14.0-cuda13");
}

TEST_CASE("cuDNN import: RPM packages in usr/lib64 with headers in usr/include") {
    TempDir t("rpm");
    fs::path usr = t.path / "usr";
    write_file(usr / "include" / "cudnn.h", "#include <cudnn_version.h>\n");
    write_file(usr / "include" / "cudnn_version.h", cudnn_version_header(9, 1, 0));
    write_file(usr / "lib64" / "libcudnn.so.9.1.0", "elf");
    fs::create_symlink("libcudnn.so.9.1.0", usr / "lib64" / "libcudnn.so.9");
    write_file(usr / "lib64" / "libcudnn_ops.so.9.1.0", "elf");
    write_file(usr / "lib64" / "libm.so.6", "not cuDNN");
    auto imp = cudnn_import_of(usr, platform::Os::Linux, Version{{12}}, std::nullopt);
    REQUIRE(imp);
    CHECK(imp->entry.id == "9.1.0-cuda12");
    CHECK(planned(*imp, "include/cudnn_version.h"));
    CHECK(planned(*imp, "lib/libcudnn_ops.so.9.1.0"));
    CHECK_FALSE(planned(*imp, "lib/libm.so.6"));
}

TEST_CASE("cuDNN import: sub-libraries of another release are named in a warning") {
    TempDir t("mixed");
    fs::path usr = make_apt_cudnn(t.path);
    fs::path lib = usr / "lib" / "x86_64-linux-gnu";
    // An upgrade to 9.19.0 that left 9.14.0's engines behind.
    for (const char* sub : {"", "_ops", "_cnn"}) {
        std::string base = std::string("libcudnn") + sub + ".so";
        fs::remove(lib / (base + ".9.14.0"));
        write_file(lib / (base + ".9.19.0"), "elf");
    }
    auto imp = cudnn_import_of(usr, platform::Os::Linux, Version{{13}}, std::nullopt);
    REQUIRE(imp);
    CHECK(imp->entry.version.str() == "9.19.0"); // dpkg's 9.14.0.64 is not this one
    CHECK(imp->warning.find("libcudnn_engines_precompiled.so.9.14.0") != std::string::npos);
    CHECK(imp->entry.note.find("libcudnn_engines_precompiled.so.9.14.0") != std::string::npos);
}

TEST_CASE("cuDNN import: a wheel is found from site-packages, nvidia/ and nvidia/cudnn") {
    for (const char* wheel : {"nvidia_cudnn_cu12-9.1.0.70", "nvidia_cudnn_cu13-9.19.0.56"}) {
        TempDir t("wheel");
        fs::path site = t.path / "site-packages";
        std::string name = wheel;
        fs::create_directories(site / (name + ".dist-info"));
        bool cu13 = name.find("cu13") != std::string::npos;
        fs::path d = site / "nvidia" / "cudnn";
        write_file(d / "include" / "cudnn_version.h",
                   cu13 ? cudnn_version_header(9, 19, 0) : cudnn_version_header(9, 1, 0));
        write_file(d / "lib" / "libcudnn.so.9", "elf");
        write_file(site / (name + ".dist-info") / "RECORD", "nvidia/cudnn/lib/libcudnn.so.9,sha256=x,3\n");
        std::string want = cu13 ? "9.19.0.56-cuda13" : "9.1.0.70-cuda12";
        for (const fs::path& from : {site, site / "nvidia", d}) {
            auto imp = cudnn_import_of(from, platform::Os::Linux, std::nullopt, std::nullopt);
            REQUIRE(imp);
            CHECK(imp->entry.id == want);
            CHECK(imp->entry.path == d);
            CHECK(imp->plan.empty());
        }
    }
}

TEST_CASE("cuDNN import: an extracted legacy archive, from its parent folder or its cuda/") {
    TempDir t("legacy");
    // Windows' "Extract all" of cudnn-11.2-windows-x64-v8.1.0.77.zip.
    fs::path zip = t.path / "cudnn-11.2-windows-x64-v8.1.0.77";
    write_file(zip / "cuda" / "include" / "cudnn_version.h", cudnn_version_header(8, 1, 0));
    write_file(zip / "cuda" / "include" / "cudnn.h", "");
    write_file(zip / "cuda" / "bin" / "cudnn64_8.dll", "pe");
    write_file(zip / "cuda" / "lib" / "x64" / "cudnn.lib", "lib");
    // tar xzf cudnn-11.2-linux-x64-v8.1.0.77.tgz into a folder named after it.
    fs::path tgz = t.path / "cudnn-11.2-linux-x64-v8.1.0.77";
    write_file(tgz / "cuda" / "include" / "cudnn_version.h", cudnn_version_header(8, 1, 0));
    write_file(tgz / "cuda" / "lib64" / "libcudnn.so.8.1.0", "elf");
    fs::create_symlink("libcudnn.so.8.1.0", tgz / "cuda" / "lib64" / "libcudnn.so.8");
    for (const auto& [dir, os] : {std::pair{zip, platform::Os::Windows}, std::pair{tgz, platform::Os::Linux}}) {
        for (const fs::path& from : {dir, dir / "cuda"}) {
            auto imp = cudnn_import_of(from, os, std::nullopt, std::nullopt);
            REQUIRE(imp);
            CHECK(imp->entry.id == "8.1.0.77-cuda11.2");
            CHECK(imp->entry.path == dir / "cuda");
        }
    }
    auto win = cudnn_import_of(zip, platform::Os::Windows, std::nullopt, std::nullopt);
    CHECK(win->entry.bin_dirs == std::vector<std::string>{"bin"});
    CHECK(win->entry.lib_dirs == std::vector<std::string>{"lib/x64"});

    // A folder that lost the archive's name: the registry says the build, and the variant when
    // it knows one build only; otherwise --cuda is asked for.
    fs::path plain = t.path / "downloads";
    fs::create_directories(plain);
    fs::rename(tgz / "cuda", plain / "cuda");
    CudnnReleaseLookup one = [](const Version& v) {
        CHECK(v.str() == "8.1.0");
        return std::vector<KnownCudnnRelease>{{Version{{8, 1, 0, 77}}, {Version{{11, 2}}}}};
    };
    auto imp = cudnn_import_of(plain, platform::Os::Linux, std::nullopt, std::nullopt, one);
    REQUIRE(imp);
    CHECK(imp->entry.id == "8.1.0.77-cuda11.2");
    CudnnReleaseLookup two = [](const Version&) {
        return std::vector<KnownCudnnRelease>{{Version{{8, 1, 0, 77}}, {Version{{10, 2}}, Version{{11, 2}}}}};
    };
    CHECK_THROWS_AS(cudnn_import_of(plain / "cuda", platform::Os::Linux, std::nullopt, std::nullopt, two),
                    CudnnImportError);
    imp = cudnn_import_of(plain / "cuda", platform::Os::Linux, Version{{10, 2}}, std::nullopt, two);
    REQUIRE(imp);
    CHECK(imp->entry.id == "8.1.0.77-cuda10.2");
}

TEST_CASE("cuDNN import: a toolkit named cuda with cuDNN copied in takes the toolkit's CUDA") {
    TempDir t("tkcuda");
    fs::path d = t.path / "cuda";
    write_file(d / "include" / "cudnn_version.h", cudnn_version_header(9, 1, 0));
    write_file(d / "lib64" / "libcudnn.so.9", "elf");
    auto imp = cudnn_import_of(d, platform::Os::Linux, std::nullopt, Version{{12, 4, 1}});
    REQUIRE(imp);
    CHECK(imp->entry.id == "9.1.0-cuda12");
}

TEST_CASE("cuDNN import: folders without cuDNN give nothing") {
    TempDir t("none");
    CHECK_FALSE(cudnn_import_of(t.path, platform::Os::Linux, std::nullopt, std::nullopt));
    // Headers without libraries are not a cuDNN.
    write_file(t.path / "include" / "cudnn_version.h", cudnn_version_header(9, 1, 0));
    CHECK_FALSE(cudnn_import_of(t.path, platform::Os::Linux, std::nullopt, std::nullopt));
    // A system folder whose libraries do not name their release.
    fs::path usr = t.path / "usr";
    write_file(usr / "lib" / "x86_64-linux-gnu" / "libcudnn.so.9", "elf");
    CHECK_THROWS_AS(cudnn_import_of(usr, platform::Os::Linux, Version{{12}}, std::nullopt), CudnnImportError);
}
