#include <catch2/catch.hpp>

#include <set>

#include "layouts/toolkit_layouts.h"
#include "test_support.h"

using namespace cvm;
using cvm::test::TempDir;
using cvm::test::write_file;

namespace {

const platform::Os kLinux = platform::Os::Linux;

std::set<std::string> rels(const ToolkitImport& t) {
    std::set<std::string> out;
    for (const auto& l : t.plan) out.insert(l.rel);
    return out;
}
fs::path target(const ToolkitImport& t, const std::string& rel) {
    for (const auto& l : t.plan)
        if (l.rel == rel) return l.target;
    return {};
}

// Stands in for the release registry (which core cannot link): records what it was asked.
struct FakeRegistry {
    ToolkitFacts seen;
    Version answer;
    IdentifyToolkit fn() {
        return [this](const ToolkitFacts& f) {
            seen = f;
            if (f.release) return toolkit_identity_from_files(f);
            return ToolkitIdentity{answer, "registry"};
        };
    }
};

// Debian's nvidia-cuda-toolkit under <root>/usr, with the neighbours a shared /usr has.
fs::path make_debian(const fs::path& root, const std::string& triplet = "x86_64-linux-gnu") {
    fs::path usr = root / "usr";
    fs::path home = usr / "lib" / "nvidia-cuda-toolkit";
    for (const char* p : {"nvcc", "cicc", "gcc", "g++"}) write_file(home / "bin" / p, "");
    write_file(home / "bin" / "nvcc.profile", "PATH += /usr/lib/nvidia-cuda-toolkit/bin:\n");
    write_file(home / "bin" / "crt" / "link.stub", "");
    write_file(home / "libdevice" / "libdevice.10.bc", "");
    for (const char* p : {"nvcc", "ptxas", "cuobjdump", "ls", "python3"}) write_file(usr / "bin" / p, "");
    write_file(usr / "include" / "cuda.h", "#define CUDA_VERSION 11080\n");
    write_file(usr / "include" / "cuda_runtime.h", "");
    write_file(usr / "include" / "crt" / "host_config.h", "");
    write_file(usr / "include" / "stdlib.h", "");
    write_file(usr / "include" / "curl" / "curl.h", "");
    write_file(usr / "include" / "nvvm.h", "");
    fs::path lib = usr / "lib" / triplet;
    for (const char* l : {"libcudart.so.11.8.89", "libcurl.so.4", "libcuda.so.1", "libcups.so.2", "libcurses.so",
                          "libcudnn.so.8", "libcublas.so.11", "libnppc.so.11", "libnvvm.so.4", "libcufft_static.a"})
        write_file(lib / l, "");
    fs::create_symlink("libcudart.so.11.8.89", lib / "libcudart.so.11.0");
    write_file(lib / "stubs" / "libcuda.so", "");
    fs::create_directories(usr / "lib" / "cuda" / "include");
    write_file(root / "var" / "lib" / "dpkg" / "status",
               "Package: libcurl4\nStatus: install ok installed\nVersion: 7.88.1-10\n\n"
               "Package: nvidia-cuda-toolkit\nStatus: install ok installed\nArchitecture: amd64\n"
               "Version: 11.8.89~11.8.0-5~deb12u1\n\n");
    return usr;
}

} // namespace

TEST_CASE("toolkit layouts: name rules keep CUDA's files and nothing else") {
    for (const char* n : {"libcudart.so.11.8.89", "libcudart_static.a", "libcublasLt.so.12", "libcusolverMg.so.11",
                          "libnppial.so.11", "libnpps_static.a", "libnvrtc-builtins.so.11.8", "libnvToolsExt.so.1",
                          "libnvperf_host.so", "libcufft_static_nocallback.a", "libnvJitLink.so.12", "libcudadevrt.a"})
        CHECK(is_cuda_library(n, kLinux));
    for (const char* n : {"libcuda.so.1", "libcudnn.so.8", "libcurl.so.4", "libcups.so.2", "libcurses.so",
                          "libnpth.so.0", "libnvidia-ml.so.1", "libcudart.pc", "libpython3.12.so"})
        CHECK_FALSE(is_cuda_library(n, kLinux));
    CHECK(is_cuda_library("cudart64_12.dll", platform::Os::Windows));
    CHECK(is_cuda_library("cublasLt.lib", platform::Os::Windows));
    CHECK_FALSE(is_cuda_library("zlib.dll", platform::Os::Windows));
    CHECK(is_cuda_program("nvcc", kLinux));
    CHECK(is_cuda_program("nvcc.exe", platform::Os::Windows));
    for (const char* n : {"gcc", "g++", "ls", "python3", "cicc"}) CHECK_FALSE(is_cuda_program(n, kLinux));
    CHECK(is_cuda_header("cuda_runtime.h"));
    CHECK(is_cuda_header("thrust"));
    CHECK_FALSE(is_cuda_header("cudnn.h"));
    CHECK_FALSE(is_cuda_header("curl"));
    CHECK_FALSE(is_cuda_header("stdlib.h"));
    CHECK(release_from_debian_version("11.8.89~11.8.0-5~deb12u1")->str() == "11.8.0");
    CHECK(release_from_debian_version("11.5.1-1ubuntu1")->str() == "11.5.1");
    CHECK(release_from_debian_version("1:12.4.131~12.4.1-1")->str() == "12.4.1");
    CHECK_FALSE(release_from_debian_version("10.1.243-3")); // a build number, not an update
}

TEST_CASE("toolkit layouts: Debian's nvidia-cuda-toolkit from /usr, its own folder or /usr/lib/cuda") {
    TempDir t("debian");
    fs::path usr = make_debian(t.path);
    fs::path home = usr / "lib" / "nvidia-cuda-toolkit";
    for (const fs::path& dir : {usr, home, usr / "lib" / "cuda"}) {
        INFO(dir);
        auto imp = toolkit_import_of(dir, kLinux);
        REQUIRE(imp);
        CHECK(imp->entry.id == "11.8.0");
        CHECK(imp->entry.origin == home);
        CHECK(imp->entry.bin_dirs == std::vector<std::string>{"bin"});
        CHECK(imp->entry.lib_dirs == std::vector<std::string>{"lib64"});
        auto r = rels(*imp);
        CHECK(target(*imp, "bin/nvcc") == home / "bin" / "nvcc"); // the real one, not /usr/bin's wrapper
        CHECK(r.count("bin/nvcc.profile"));
        CHECK(target(*imp, "bin/ptxas") == usr / "bin" / "ptxas");
        for (const char* no : {"bin/gcc", "bin/g++", "bin/ls", "bin/python3", "bin/cicc"}) CHECK_FALSE(r.count(no));
        CHECK(r.count("include/cuda_runtime.h"));
        CHECK(r.count("include/crt"));
        CHECK_FALSE(r.count("include/stdlib.h"));
        CHECK_FALSE(r.count("include/curl"));
        CHECK(r.count("lib64/libcudart.so.11.8.89"));
        CHECK(r.count("lib64/libcudart.so")); // made for find_library(cudart) and -lcudart
        CHECK(r.count("lib64/libcublas.so"));
        CHECK(r.count("lib64/stubs/libcuda.so"));
        for (const char* no : {"lib64/libcuda.so.1", "lib64/libcurl.so.4", "lib64/libcups.so.2", "lib64/libcurses.so",
                               "lib64/libcudnn.so.8"})
            CHECK_FALSE(r.count(no));
        CHECK(target(*imp, "nvvm/libdevice") == home / "libdevice");
        CHECK(r.count("nvvm/bin/cicc"));
        CHECK(r.count("nvvm/lib64/libnvvm.so.4"));
        CHECK(imp->entry.note.find("nvidia-cuda-toolkit 11.8.89~11.8.0-5~deb12u1") != std::string::npos);
    }
    // The plan builds into a root whose files are the real ones.
    auto imp = toolkit_import_of(usr, kLinux);
    fs::path root = t.path / "assembled";
    build_assembled_root(root, imp->plan);
    CHECK(fs::equivalent(root / "bin" / "nvcc", home / "bin" / "nvcc"));
    CHECK(fs::exists(root / "include" / "cuda_runtime.h"));
    CHECK(fs::exists(root / "lib64" / "libcudart.so"));
    CHECK(fs::exists(root / "nvvm" / "libdevice" / "libdevice.10.bc"));

    // Without dpkg's record, cudart's file name is asked of the registry.
    fs::remove(t.path / "var" / "lib" / "dpkg" / "status");
    FakeRegistry reg{{}, Version{{11, 8, 0}}};
    imp = toolkit_import_of(usr, kLinux, reg.fn());
    REQUIRE(imp);
    CHECK(imp->entry.id == "11.8.0");
    REQUIRE(reg.seen.cudart);
    CHECK(reg.seen.cudart->str() == "11.8.89");
    CHECK(reg.seen.cuda_h->str() == "11.8");
}

TEST_CASE("toolkit layouts: the multiarch folder is the one that exists; RPM's lib64 too") {
    TempDir t("arm");
    fs::path usr = make_debian(t.path, "aarch64-linux-gnu");
    auto imp = toolkit_import_of(usr, kLinux);
    REQUIRE(imp);
    CHECK(target(*imp, "lib64/libcudart.so.11.8.89") == usr / "lib" / "aarch64-linux-gnu" / "libcudart.so.11.8.89");

    TempDir r("rpm");
    fs::path p = r.path / "usr";
    for (const char* b : {"nvcc", "ptxas", "ls", "bash"}) write_file(p / "bin" / b, "");
    write_file(p / "include" / "cuda" / "cuda.h", "#define CUDA_VERSION 12040\n");
    write_file(p / "include" / "cuda" / "cuda_runtime.h", "");
    write_file(p / "include" / "zlib.h", "");
    write_file(p / "lib64" / "libcudart.so.12.4.127", "");
    write_file(p / "lib64" / "libz.so.1", "");
    FakeRegistry reg{{}, Version{{12, 4, 1}}};
    imp = toolkit_import_of(p, kLinux, reg.fn());
    REQUIRE(imp);
    CHECK(imp->entry.id == "12.4.1");
    auto rs = rels(*imp);
    CHECK(rs.count("include/cuda_runtime.h"));
    CHECK_FALSE(rs.count("include/zlib.h"));
    CHECK(rs.count("lib64/libcudart.so"));
    CHECK_FALSE(rs.count("lib64/libz.so.1"));
    CHECK_FALSE(rs.count("bin/bash"));
}

TEST_CASE("toolkit layouts: a conda environment") {
    TempDir t("conda");
    fs::path env = t.path / "envs" / "cu124";
    for (const char* m : {"cuda-nvcc-12.4.131-0.json", "cuda-nvcc-impl-12.4.131-0.json", "cuda-cudart-12.4.127-0.json",
                          "cuda-version-12.4-h3060b56_3.json", "python-3.12.3-h.json"})
        write_file(env / "conda-meta" / m, "{}");
    for (const char* b : {"nvcc", "ptxas", "python3", "ls"}) write_file(env / "bin" / b, "");
    write_file(env / "bin" / "nvcc.profile", "INCLUDES += \"-I$(TOP)/$(_TARGET_DIR_)/include\"\n");
    fs::path tgt = env / "targets" / "x86_64-linux";
    write_file(tgt / "include" / "cuda.h", "#define CUDA_VERSION 12040\n");
    write_file(tgt / "include" / "cuda_runtime.h", "");
    write_file(tgt / "lib" / "libcudart.so.12.4.127", "");
    write_file(env / "include" / "python3.12" / "Python.h", "");
    write_file(env / "lib" / "libcurl.so.4", "");
    write_file(env / "lib" / "libpython3.12.so", "");
    write_file(env / "nvvm" / "libdevice" / "libdevice.10.bc", "");
    FakeRegistry reg{{}, Version{{12, 4, 1}}};
    auto imp = toolkit_import_of(env, kLinux, reg.fn());
    REQUIRE(imp);
    CHECK(imp->entry.id == "12.4.1");
    CHECK(imp->entry.origin == env);
    CHECK(reg.seen.nvcc->str() == "12.4.131");
    CHECK(reg.seen.cudart->str() == "12.4.127");
    auto r = rels(*imp);
    CHECK(r.count("bin/nvcc"));
    CHECK_FALSE(r.count("bin/python3"));
    CHECK(r.count("include/cuda_runtime.h"));
    CHECK_FALSE(r.count("include/python3.12"));
    CHECK(r.count("lib64/libcudart.so"));
    CHECK_FALSE(r.count("lib64/libpython3.12.so"));
    CHECK(target(*imp, "nvvm") == env / "nvvm");
    // nvcc.profile is read beside the link, with paths relative to it.
    CHECK(r.count("targets/x86_64-linux/include/cuda_runtime.h"));
    CHECK(r.count("targets/x86_64-linux/lib/libcudart.so.12.4.127"));

    SECTION("on Windows, under Library\\") {
        TempDir w("condawin");
        fs::path e = w.path / "env";
        write_file(e / "conda-meta" / "cuda-cudart-12.4.127-0.json", "{}");
        write_file(e / "python.exe", "");
        for (const char* b : {"nvcc.exe", "ptxas.exe", "cudart64_12.dll", "zlib.dll", "gzip.exe"})
            write_file(e / "Library" / "bin" / b, "");
        write_file(e / "Library" / "include" / "cuda_runtime.h", "");
        write_file(e / "Library" / "include" / "zlib.h", "");
        write_file(e / "Library" / "lib" / "cudart.lib", "");
        write_file(e / "Library" / "lib" / "zlib.lib", "");
        write_file(e / "Library" / "nvvm" / "libdevice" / "libdevice.10.bc", "");
        auto wi = toolkit_import_of(e, platform::Os::Windows, reg.fn());
        REQUIRE(wi);
        auto wr = rels(*wi);
        CHECK(wi->entry.lib_dirs == std::vector<std::string>{"lib/x64"});
        for (const char* yes : {"bin/nvcc.exe", "bin/cudart64_12.dll", "include/cuda_runtime.h", "lib/x64/cudart.lib", "nvvm"})
            CHECK(wr.count(yes));
        for (const char* no : {"bin/zlib.dll", "bin/gzip.exe", "include/zlib.h", "lib/x64/zlib.lib"}) CHECK_FALSE(wr.count(no));
    }
}

TEST_CASE("toolkit layouts: pip wheels of CUDA 12 and 13") {
    TempDir t("wheels");
    fs::path site = t.path / "lib" / "python3.12" / "site-packages";
    fs::path nv = site / "nvidia";
    SECTION("CUDA 12: one folder per component") {
        write_file(nv / "cuda_nvcc" / "bin" / "nvcc", "");
        write_file(nv / "cuda_nvcc" / "bin" / "ptxas", "");
        write_file(nv / "cuda_nvcc" / "include" / "crt" / "host_config.h", "");
        write_file(nv / "cuda_nvcc" / "nvvm" / "libdevice" / "libdevice.10.bc", "");
        write_file(nv / "cuda_runtime" / "include" / "cuda_runtime.h", "");
        write_file(nv / "cuda_runtime" / "include" / "cuda.h", "#define CUDA_VERSION 12040\n");
        write_file(nv / "cuda_runtime" / "lib" / "libcudart.so.12", "");
        write_file(nv / "cuda_runtime" / "lib" / "__init__.py", "");
        // Two components with a folder of one name: merged, each file from its own wheel.
        write_file(nv / "cuda_runtime" / "include" / "crt" / "runtime_part.h", "");
        write_file(nv / "cublas" / "lib" / "libcublas.so.12", "");
        write_file(nv / "cudnn" / "include" / "cudnn.h", "");
        write_file(nv / "cudnn" / "lib" / "libcudnn.so.9", "");
        fs::create_directories(site / "nvidia_cuda_nvcc_cu12-12.4.131.dist-info");
        fs::create_directories(site / "nvidia_cuda_runtime_cu12-12.4.127.dist-info");
        for (const fs::path& dir : {site, nv}) {
            FakeRegistry reg{{}, Version{{12, 4, 1}}};
            auto imp = toolkit_import_of(dir, kLinux, reg.fn());
            REQUIRE(imp);
            CHECK(imp->entry.id == "12.4.1");
            CHECK(imp->entry.origin == nv);
            CHECK(reg.seen.nvcc->str() == "12.4.131");
            CHECK(reg.seen.cudart->str() == "12.4.127");
            auto r = rels(*imp);
            CHECK(r.count("bin/nvcc"));
            CHECK(r.count("include/cuda_runtime.h"));
            CHECK_FALSE(r.count("include/crt"));
            CHECK(target(*imp, "include/crt/host_config.h") == nv / "cuda_nvcc" / "include" / "crt" / "host_config.h");
            CHECK(target(*imp, "include/crt/runtime_part.h") == nv / "cuda_runtime" / "include" / "crt" / "runtime_part.h");
            CHECK_FALSE(r.count("lib64/__init__.py"));
            CHECK(target(*imp, "lib64/libcudart.so") == nv / "cuda_runtime" / "lib" / "libcudart.so.12");
            CHECK(r.count("lib64/libcublas.so.12"));
            CHECK_FALSE(r.count("include/cudnn.h"));
            CHECK_FALSE(r.count("lib64/libcudnn.so.9"));
            CHECK(target(*imp, "nvvm") == nv / "cuda_nvcc" / "nvvm");
            CHECK(imp->entry.note.find("runtime only") == std::string::npos);
        }
    }
    SECTION("CUDA 13: nvidia/cu13") {
        write_file(nv / "cu13" / "bin" / "nvcc", "");
        write_file(nv / "cu13" / "include" / "cuda_runtime.h", "");
        write_file(nv / "cu13" / "include" / "cuda.h", "#define CUDA_VERSION 13000\n");
        write_file(nv / "cu13" / "lib" / "libcudart.so.13", "");
        write_file(nv / "cu13" / "nvvm" / "libdevice" / "libdevice.10.bc", "");
        // The CCCL wheel's headers under include/cccl/ and its CMake files under cccl/.
        write_file(nv / "cu13" / "include" / "cccl" / "cub" / "cub.cuh", "");
        write_file(nv / "cu13" / "cccl" / "lib" / "cmake" / "cub" / "cub-config.cmake", "");
        write_file(nv / "cu13" / "lib" / "stubs" / "libcuda.so", "");
        fs::create_directories(site / "nvidia_cuda_nvcc-13.0.88.dist-info");
        fs::create_directories(site / "nvidia_cuda_runtime-13.0.96.dist-info");
        FakeRegistry reg{{}, Version{{13, 0, 2}}};
        auto imp = toolkit_import_of(site, kLinux, reg.fn());
        REQUIRE(imp);
        CHECK(imp->entry.id == "13.0.2");
        CHECK(reg.seen.nvcc->str() == "13.0.88");
        CHECK(reg.seen.cudart->str() == "13.0.96");
        CHECK(reg.seen.cuda_h->str() == "13.0");
        auto r = rels(*imp);
        CHECK(r.count("bin/nvcc"));
        CHECK(r.count("lib64/libcudart.so"));
        CHECK(target(*imp, "nvvm") == nv / "cu13" / "nvvm");
        // The whole tree, as the folder has it: lib/ too, as the wheels' nvcc.profile names it.
        CHECK(target(*imp, "include/cccl") == nv / "cu13" / "include" / "cccl");
        CHECK(target(*imp, "cccl") == nv / "cu13" / "cccl");
        CHECK(target(*imp, "lib/libcudart.so.13") == nv / "cu13" / "lib" / "libcudart.so.13");
        CHECK(target(*imp, "lib64/stubs") == nv / "cu13" / "lib" / "stubs");
        CHECK(target(*imp, "lib/stubs") == nv / "cu13" / "lib" / "stubs");
    }
    SECTION("cudart alone is a runtime-only toolkit; cuBLAS alone is none") {
        write_file(nv / "cublas" / "lib" / "libcublas.so.12", "");
        CHECK_FALSE(toolkit_import_of(site, kLinux));
        write_file(nv / "cuda_runtime" / "include" / "cuda.h", "#define CUDA_VERSION 12040\n");
        write_file(nv / "cuda_runtime" / "lib" / "libcudart.so.12", "");
        fs::create_directories(site / "nvidia_cuda_runtime_cu12-12.4.127.dist-info");
        FakeRegistry reg{{}, Version{{12, 4, 1}}};
        auto imp = toolkit_import_of(site, kLinux, reg.fn());
        REQUIRE(imp);
        CHECK(imp->entry.note.find("runtime only") != std::string::npos);
        CHECK(imp->entry.bin_dirs.empty());
    }
}

TEST_CASE("toolkit layouts: self-contained roots stay as they are; a shared bin is never the entry's") {
    TempDir t("self");
    fs::path tk = t.path / "cuda-12.4";
    write_file(tk / "version.json", R"({"cuda":{"version":"12.4.1"}})");
    write_file(tk / "bin" / "nvcc", "");
    write_file(tk / "include" / "cuda.h", "#define CUDA_VERSION 12040\n");
    write_file(tk / "lib64" / "libcudart.so.12", "");
    auto imp = toolkit_import_of(tk, kLinux);
    REQUIRE(imp);
    CHECK(imp->plan.empty());
    CHECK(imp->entry.path == tk);
    CHECK(imp->entry.origin.empty());
    CHECK(imp->entry.id == "12.4.1");
    CHECK(imp->entry.bin_dirs == std::vector<std::string>{"bin"});
    // Host compiler wrappers beside nvcc (as Debian ships) do not make the root a shared prefix.
    for (const char* w : {"gcc", "g++"}) write_file(tk / "bin" / w, "");
    auto wrapped = toolkit_import_of(tk, kLinux);
    REQUIRE(wrapped);
    CHECK(wrapped->plan.empty());
    CHECK(wrapped->entry.id == "12.4.1");

    // nvcc installed straight into a prefix with other programs (/usr/local, say).
    fs::path pre = t.path / "local";
    for (const char* b : {"nvcc", "python3", "perl"}) write_file(pre / "bin" / b, "");
    write_file(pre / "include" / "cuda.h", "#define CUDA_VERSION 12040\n");
    write_file(pre / "lib64" / "libcudart.so.12.4.127", "");
    FakeRegistry reg{{}, Version{{12, 4, 1}}};
    imp = toolkit_import_of(pre, kLinux, reg.fn());
    REQUIRE(imp);
    CHECK_FALSE(imp->plan.empty());
    CHECK(imp->entry.origin == pre);
    CHECK_FALSE(rels(*imp).count("bin/python3"));
}

TEST_CASE("toolkit layouts: a toolkit nothing dates is an error naming the folder and what is missing") {
    TempDir t("undated");
    fs::path tk = t.path / "mystery";
    write_file(tk / "include" / "cuda.h", "/* no version here */\n");
    write_file(tk / "bin" / "nvcc", ""); // not a program: --version cannot answer
    try {
        toolkit_import_of(tk, kLinux);
        FAIL("no error");
    } catch (const std::runtime_error& e) {
        std::string what = e.what();
        CHECK(what.find(tk.u8string()) != std::string::npos);
        CHECK(what.find("version.json") != std::string::npos);
    }
    // Debian's layout without dpkg's record, a dated cuda.h or a versioned libcudart.
    TempDir d("undeb");
    fs::path usr = make_debian(d.path);
    fs::remove(d.path / "var" / "lib" / "dpkg" / "status");
    write_file(usr / "include" / "cuda.h", "");
    fs::path lib = usr / "lib" / "x86_64-linux-gnu";
    fs::remove(lib / "libcudart.so.11.0");
    fs::remove(lib / "libcudart.so.11.8.89");
    write_file(lib / "libcudart.so.11.0", "");
    try {
        toolkit_import_of(usr, kLinux);
        FAIL("no error");
    } catch (const std::runtime_error& e) {
        std::string what = e.what();
        CHECK(what.find(usr.u8string()) != std::string::npos);
        CHECK(what.find("nothing tells its version") != std::string::npos);
        CHECK(what.find("libcudart.so.X.Y.Z") != std::string::npos);
    }
}
