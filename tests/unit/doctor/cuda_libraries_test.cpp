#include "doctor/cuda_libraries.h"

#include "binary/binary_test_support.h"

#include <catch2/catch.hpp>

using namespace cvm::doctor;
using namespace cvm::binary;
using namespace cvm::binary::test;

namespace {
std::vector<std::string> files(const std::vector<LibraryName>& names) {
    std::vector<std::string> out;
    for (const auto& n : names)
        out.push_back(n.file);
    return out;
}
} // namespace

TEST_CASE("cuDNN library names", "[doctor][names]") {
    CHECK(files(cudnn_libraries(8, TargetOs::linux_gnu)) ==
          std::vector<std::string>{"libcudnn.so.8", "libcudnn_ops_infer.so.8",
                                   "libcudnn_ops_train.so.8", "libcudnn_cnn_infer.so.8",
                                   "libcudnn_cnn_train.so.8", "libcudnn_adv_infer.so.8",
                                   "libcudnn_adv_train.so.8"});
    CHECK(files(cudnn_libraries(8, TargetOs::windows)) ==
          std::vector<std::string>{"cudnn64_8.dll", "cudnn_ops_infer64_8.dll",
                                   "cudnn_ops_train64_8.dll", "cudnn_cnn_infer64_8.dll",
                                   "cudnn_cnn_train64_8.dll", "cudnn_adv_infer64_8.dll",
                                   "cudnn_adv_train64_8.dll"});
    auto nine = cudnn_libraries(9, TargetOs::windows);
    CHECK(files(nine) == std::vector<std::string>{"cudnn64_9.dll", "cudnn_ops64_9.dll",
                                                  "cudnn_cnn64_9.dll", "cudnn_adv64_9.dll",
                                                  "cudnn_graph64_9.dll", "cudnn_heuristic64_9.dll",
                                                  "cudnn_engines_precompiled64_9.dll",
                                                  "cudnn_engines_runtime_compiled64_9.dll"});
    CHECK(nine[0].main);
    CHECK_FALSE(nine[1].main);
    CHECK(nine[7].role == "cudnn_engines_runtime_compiled");
    CHECK(files(cudnn_libraries(7, TargetOs::linux_gnu)) ==
          std::vector<std::string>{"libcudnn.so.7"});
}

TEST_CASE("CUDA runtime and cuBLAS names", "[doctor][names]") {
    CHECK(cudart_library(10, 2, TargetOs::linux_gnu).file == "libcudart.so.10.2");
    CHECK(cudart_library(10, 2, TargetOs::windows).file == "cudart64_102.dll");
    CHECK(cudart_library(11, 2, TargetOs::linux_gnu).file == "libcudart.so.11.0");
    CHECK(cudart_library(11, 8, TargetOs::windows).file == "cudart64_110.dll");
    CHECK(cudart_library(12, 4, TargetOs::linux_gnu).file == "libcudart.so.12");
    CHECK(cudart_library(12, 4, TargetOs::windows).file == "cudart64_12.dll");
    CHECK(cudart_library(13, 0, TargetOs::windows).file == "cudart64_13.dll");
    CHECK(files(cublas_libraries(11, 2, TargetOs::windows)) ==
          std::vector<std::string>{"cublas64_11.dll", "cublasLt64_11.dll"});
    CHECK(files(cublas_libraries(12, 4, TargetOs::linux_gnu)) ==
          std::vector<std::string>{"libcublas.so.12", "libcublasLt.so.12"});
    CHECK(files(cublas_libraries(10, 0, TargetOs::windows)) ==
          std::vector<std::string>{"cublas64_100.dll"});
}

TEST_CASE("Versions from .so file names", "[doctor][names]") {
    CHECK(so_version_from_file_name("libcudnn.so.8.1.0") == std::optional<std::string>("8.1.0"));
    CHECK(so_version_from_file_name("libcudnn_ops.so.9.19.0") ==
          std::optional<std::string>("9.19.0"));
    CHECK(so_version_from_file_name("libcudnn.so.8") == std::optional<std::string>("8"));
    CHECK_FALSE(so_version_from_file_name("libcudnn.so"));
    CHECK_FALSE(so_version_from_file_name("libcudnn.so.8.bak"));
    CHECK_FALSE(so_version_from_file_name("libcudnn.so.8..1"));
    CHECK(so_base_name("libcudnn_ops.so.9.1.0") == "libcudnn_ops");
}

TEST_CASE("A Linux library's version through its symbolic links", "[doctor][names]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    TempDir t;
    auto r = build_shared_object(*cc, t.str("lib/libcudnn.so.8.1.0"), "-Wl,-soname,libcudnn.so.8");
    REQUIRE(r.ok());
    fs::create_symlink("libcudnn.so.8.1.0", t.str("lib/libcudnn.so.8"));
    fs::create_symlink("libcudnn.so.8", t.str("lib/libcudnn.so"));
    RealFileSystem view;
    auto v = linux_library_version(t.str("lib/libcudnn.so"), view);
    REQUIRE(v);
    CHECK(v->version == "8.1.0");
    CHECK(v->real_path == fs::canonical(t.str("lib/libcudnn.so.8.1.0")).string());
    CHECK_FALSE(linux_library_version(t.str("lib/missing.so.8"), view));
}

TEST_CASE("A DLL's fixed file version", "[doctor][names]") {
    if (!find_program("x86_64-w64-mingw32-gcc") || !find_program("x86_64-w64-mingw32-windres")) {
        WARN("mingw-w64 missing: skipping");
        return;
    }
    TempDir t;
    write_file(t.str("x.c"), "__declspec(dllexport) int f(void) { return 0; }\n");
    write_file(t.str("v.rc"), "1 VERSIONINFO\nFILEVERSION 6,14,11,11020\nPRODUCTVERSION 11,2,0,0\n"
                              "BEGIN\nEND\n");
    auto r = run_command("cd " + shell_quote(t.str()) +
                             " && x86_64-w64-mingw32-windres v.rc -O coff -o v.o && "
                             "x86_64-w64-mingw32-gcc -shared -o cudart64_110.dll x.c v.o",
                         t.str());
    INFO(r.output);
    REQUIRE(r.ok());
    RealFileSystem view;
    auto v = dll_file_version(t.str("cudart64_110.dll"), view);
    REQUIRE(v);
    CHECK(v->str() == "6.14.11.11020");
    CHECK_FALSE(dll_file_version(t.str("x.c"), view));
}
