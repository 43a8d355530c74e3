#include <catch2/catch.hpp>

#include "layouts/folder_facts.h"
#include "spec/redist_platform.h"
#include "store/resolve.h"
#include "activation/view.h"
#include "test_support.h"

using namespace cvm;
using cvm::test::TempDir;
using cvm::test::write_file;

TEST_CASE("version readers") {
    CHECK(toolkit_version_from_version_json(R"({"cuda":{"name":"CUDA SDK","version":"11.2.2"},"cuda_cudart":{"version":"11.2.152"}})")->str() == "11.2.2");
    CHECK(component_version_from_version_json(R"({"cuda_cudart":{"version":"11.2.152"}})", "cuda_cudart")->str() == "11.2.152");
    CHECK_FALSE(toolkit_version_from_version_json("{not json"));
    CHECK_FALSE(toolkit_version_from_version_json(R"({"cuda":{"version":"a.b"}})"));
    CHECK(toolkit_version_from_version_txt("CUDA Version 11.0.228\n")->str() == "11.0.228");
    CHECK(toolkit_version_from_version_txt("CUDA Version 10.2\n")->str() == "10.2.0");
    CHECK(toolkit_version_from_cuda_h("#define CUDA_VERSION 11020\n")->str() == "11.2");
    CHECK(toolkit_version_from_cuda_h("#define CUDA_VERSION 13000\n")->str() == "13.0");
    CHECK(nvcc_version_from_output("Cuda compilation tools, release 11.2, V11.2.152\n")->str() == "11.2.152");
    CHECK(cudnn_version_from_header("#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n")->str() == "8.1.0");
    CHECK_FALSE(cudnn_version_from_header("#define CUDNN_MAJOR 8\n"));
}

TEST_CASE("Windows platform names") {
    CHECK(is_windows_platform("windows-x86_64"));
    CHECK(is_windows_platform("windows-arm64"));
    CHECK(is_windows_platform("windows10"));
    CHECK_FALSE(is_windows_platform("linux-x86_64"));
    CHECK_FALSE(is_windows_platform("linux-sbsa"));
    CHECK_FALSE(is_windows_platform("win"));
    CHECK_FALSE(is_windows_platform(""));
}

TEST_CASE("cuDNN facts from archive and wheel names") {
    auto legacy = cudnn_info_from_name("cudnn-11.2-windows-x64-v8.1.0.77.zip");
    REQUIRE(legacy);
    CHECK(legacy->version.str() == "8.1.0.77");
    CHECK(legacy->cuda->str() == "11.2");
    CHECK(legacy->platform == "windows-x86_64");
    auto w10 = cudnn_info_from_name("cudnn-10.2-windows10-x64-v7.6.5.32");
    REQUIRE(w10);
    CHECK(w10->platform == "windows-x86_64");
    auto redist = cudnn_info_from_name("cudnn-linux-x86_64-8.9.7.29_cuda12-archive");
    REQUIRE(redist);
    CHECK(redist->version.str() == "8.9.7.29");
    CHECK(redist->cuda->str() == "12");
    CHECK(redist->platform == "linux-x86_64");
    auto minor = cudnn_info_from_name("cudnn-linux-x86_64-8.3.2.44_cuda11.5-archive.tar.xz");
    REQUIRE(minor);
    CHECK(minor->cuda->str() == "11.5");
    auto wheel = cudnn_info_from_name("nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl");
    REQUIRE(wheel);
    CHECK(wheel->version.str() == "9.1.0.70");
    CHECK(wheel->cuda->str() == "12");
    CHECK_FALSE(cudnn_info_from_name("cuda_nvcc-linux-x86_64-11.8.89-archive"));
}

TEST_CASE("folder detection: a toolkit with cuDNN copied in registers both") {
    TempDir t("detect");
    fs::path tk = t.path / "cuda-11.2";
    write_file(tk / "version.json", R"({"cuda":{"version":"11.2.2"}})");
    write_file(tk / "include" / "cuda.h", "#define CUDA_VERSION 11020\n");
    write_file(tk / "bin" / "nvcc", "");
    write_file(tk / "lib64" / "libcudart.so.11.0", "");
    write_file(tk / "include" / "cudnn_version.h", "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n");
    write_file(tk / "lib64" / "libcudnn.so.8", "");
    FolderFacts f = detect_folder(tk, platform::Os::Linux, false);
    REQUIRE(f.toolkit);
    CHECK(f.toolkit->release->str() == "11.2.2");
    CHECK(f.toolkit->lib_dirs == std::vector<std::string>{"lib64"});
    REQUIRE(f.cudnn);
    CHECK(f.cudnn->version.str() == "8.1.0");
    CHECK(f.cudnn->lib_dirs == std::vector<std::string>{"lib64"});
}

TEST_CASE("folder detection: a packaged toolkit without version.json gives cudart's version by file name") {
    TempDir t("detectpkg");
    fs::path tk = t.path / "cuda-13.0";
    write_file(tk / "include" / "cuda.h", "#define CUDA_VERSION 13000\n");
    write_file(tk / "bin" / "nvcc", "");
    write_file(tk / "lib64" / "libcudart.so.13.0.96", "x");
    fs::create_symlink("libcudart.so.13.0.96", tk / "lib64" / "libcudart.so.13");
    write_file(tk / "lib64" / "libcudart_static.a", "x");
    FolderFacts f = detect_folder(tk, platform::Os::Linux, false);
    REQUIRE(f.toolkit);
    CHECK_FALSE(f.toolkit->release);
    REQUIRE(f.toolkit->cudart);
    CHECK(f.toolkit->cudart->str() == "13.0.96");
}

TEST_CASE("folder detection: cuDNN 7 keeps its version in cudnn.h; names add the build") {
    TempDir t("detect7");
    fs::path d = t.path / "cudnn-10.0-linux-x64-v7.6.5.32";
    write_file(d / "include" / "cudnn.h", "#define CUDNN_MAJOR 7\n#define CUDNN_MINOR 6\n#define CUDNN_PATCHLEVEL 5\n");
    write_file(d / "lib64" / "libcudnn.so.7", "");
    FolderFacts f = detect_folder(d, platform::Os::Linux, false);
    CHECK_FALSE(f.toolkit);
    REQUIRE(f.cudnn);
    CHECK(f.cudnn->version.str() == "7.6.5.32");
    CHECK(f.cudnn->cuda->str() == "10.0");
}

TEST_CASE("folder detection: a wheel's nvidia/cudnn gets version and CUDA from its dist-info") {
    TempDir t("wheel");
    fs::path site = t.path / "site-packages";
    fs::create_directories(site / "nvidia_cudnn_cu12-9.1.0.70.dist-info");
    fs::path d = site / "nvidia" / "cudnn";
    write_file(d / "include" / "cudnn_version.h", "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n");
    write_file(d / "lib" / "libcudnn.so.9", "");
    FolderFacts f = detect_folder(d, platform::Os::Linux, false);
    REQUIRE(f.cudnn);
    CHECK(f.cudnn->version.str() == "9.1.0.70");
    CHECK(f.cudnn->cuda->str() == "12");
    // A dist-info that disagrees with the header is ignored.
    fs::rename(site / "nvidia_cudnn_cu12-9.1.0.70.dist-info", site / "nvidia_cudnn_cu12-9.2.0.82.dist-info");
    f = detect_folder(d, platform::Os::Linux, false);
    CHECK(f.cudnn->version.str() == "9.1.0");
}

TEST_CASE("merged view shows cuDNN inside the toolkit without touching either") {
    TempDir t("view");
    fs::path tk = t.path / "tk", dnn = t.path / "dnn";
    write_file(tk / "include" / "cuda.h", "x");
    write_file(tk / "lib64" / "libcudart.so.11.0", "x");
    write_file(tk / "bin" / "nvcc", "x");
    write_file(tk / "nvvm" / "bin" / "cicc", "x");
    write_file(dnn / "include" / "cudnn.h", "x");
    write_file(dnn / "lib" / "libcudnn.so.8", "x");
    Store store({t.path / "root"});
    Resolved r;
    r.toolkit.id = "11.2.2";
    r.toolkit.path = tk;
    r.toolkit.lib_dirs = {"lib64"};
    Entry c;
    c.kind = Kind::Cudnn;
    c.id = "8.1.0.77-cuda11.2";
    c.path = dnn;
    c.include_dirs = {"include"};
    c.lib_dirs = {"lib"};
    r.cudnn = c;
    fs::path v = ensure_view(store, r, platform::Os::Linux);
    CHECK(v == t.path / "root" / "views" / "11.2.2+8.1.0.77-cuda11.2");
    CHECK(fs::exists(v / "include" / "cudnn.h"));
    CHECK(fs::exists(v / "include" / "cuda.h"));
    CHECK(fs::exists(v / "lib64" / "libcudnn.so.8"));
    CHECK(fs::exists(v / "lib64" / "libcudart.so.11.0"));
    CHECK(fs::exists(v / "nvvm" / "bin" / "cicc"));
    CHECK(fs::is_symlink(v / "nvvm"));
    CHECK_FALSE(fs::exists(tk / "include" / "cudnn.h"));
    CHECK(ensure_view(store, r, platform::Os::Linux) == v); // second call reuses it
    CHECK((!fs::exists(t.path / "root" / ".staging") || fs::is_empty(t.path / "root" / ".staging")));
}
