#include "install/archive_name.h"

#include <catch2/catch.hpp>

using namespace cvm::install;

TEST_CASE("legacy cuDNN names", "[archive_name]") {
    auto w = parse_archive_name("cudnn-11.2-windows-x64-v8.1.0.77.zip");
    REQUIRE(w);
    CHECK(w->family == ArchiveFamily::LegacyCudnn);
    CHECK(w->product == "cudnn");
    CHECK(w->version == "8.1.0.77");
    CHECK(w->cuda_variant == "11.2");
    CHECK(w->platform == "windows-x86_64");
    CHECK(w->extension == "zip");
    auto w10 = parse_archive_name("C:\\Downloads\\cudnn-10.2-windows10-x64-v8.1.0.77.zip");
    REQUIRE(w10);
    CHECK(w10->cuda_variant == "10.2");
    CHECK(w10->platform == "windows-x86_64");
    auto l = parse_archive_name("/tmp/cudnn-11.2-linux-x64-v8.1.0.77.tgz");
    REQUIRE(l);
    CHECK(l->platform == "linux-x86_64");
    CHECK(l->extension == "tgz");
    auto sbsa = parse_archive_name("cudnn-11.2-linux-aarch64sbsa-v8.1.0.77.tgz");
    REQUIRE(sbsa);
    CHECK(sbsa->platform == "linux-sbsa");
    auto p = parse_archive_name("cudnn-10.2-linux-ppc64le-v7.6.5.32.tgz");
    REQUIRE(p);
    CHECK(p->version == "7.6.5.32");
    CHECK(p->platform == "linux-ppc64le");
}

TEST_CASE("cuDNN redist names", "[archive_name]") {
    auto n = parse_archive_name("cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz");
    REQUIRE(n);
    CHECK(n->family == ArchiveFamily::CudnnRedist);
    CHECK(n->version == "8.9.7.29");
    CHECK(n->cuda_variant == "12");
    CHECK(n->platform == "linux-x86_64");
    CHECK(n->extension == "tar.xz");
    auto w = parse_archive_name("cudnn-windows-x86_64-8.9.7.29_cuda11-archive.zip");
    REQUIRE(w);
    CHECK(w->platform == "windows-x86_64");
    CHECK(w->cuda_variant == "11");
    auto minor = parse_archive_name("cudnn-linux-sbsa-8.4.1.50_cuda11.6-archive.tar.xz");
    REQUIRE(minor);
    CHECK(minor->cuda_variant == "11.6");
    CHECK(minor->platform == "linux-sbsa");
    auto folder = parse_archive_folder_name("cudnn-linux-x86_64-9.19.0.56_cuda13-archive");
    REQUIRE(folder);
    CHECK(folder->version == "9.19.0.56");
    CHECK(folder->extension.empty());
}

TEST_CASE("CUDA component names", "[archive_name]") {
    auto n = parse_archive_name("cuda_nvcc-linux-x86_64-11.8.89-archive.tar.xz");
    REQUIRE(n);
    CHECK(n->family == ArchiveFamily::CudaComponent);
    CHECK(n->product == "cuda_nvcc");
    CHECK(n->version == "11.8.89");
    CHECK(n->cuda_variant.empty());
    auto lib = parse_archive_name("libcublas-windows-x86_64-11.11.3.6-archive.zip");
    REQUIRE(lib);
    CHECK(lib->product == "libcublas");
    CHECK(lib->platform == "windows-x86_64");
    auto compat = parse_archive_name("cuda_compat-linux-aarch64-11.8.31339915-archive.tar.xz");
    REQUIRE(compat);
    CHECK(compat->platform == "linux-aarch64");
}

TEST_CASE("wheel names", "[archive_name]") {
    auto n = parse_archive_name("nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl");
    REQUIRE(n);
    CHECK(n->family == ArchiveFamily::CudnnWheel);
    CHECK(n->version == "9.1.0.70");
    CHECK(n->cuda_variant == "12");
    CHECK(n->platform == "linux-x86_64");
    CHECK(n->wheel_project == "nvidia-cudnn-cu12");
    auto b = parse_archive_name("nvidia_cudnn_cu11-8.5.0.96-2-py3-none-manylinux1_x86_64.whl");
    REQUIRE(b);
    CHECK(b->version == "8.5.0.96");
    CHECK(b->cuda_variant == "11");
    auto multi = parse_archive_name(
        "nvidia_cudnn_cu13-9.19.0.56-py3-none-manylinux_2_27_aarch64.manylinux_2_28_aarch64.whl");
    REQUIRE(multi);
    CHECK(multi->platform == "linux-sbsa");
    auto win = parse_archive_name("nvidia_cudnn_cu12-9.1.0.70-py3-none-win_amd64.whl");
    REQUIRE(win);
    CHECK(win->platform == "windows-x86_64");
    auto rt =
        parse_archive_name("nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl");
    REQUIRE(rt);
    CHECK(rt->family == ArchiveFamily::CudaWheel);
    CHECK(rt->product == "cuda_runtime");
    CHECK(rt->cuda_variant == "12");
    auto rt13 =
        parse_archive_name("nvidia_cuda_runtime-13.0.96-py3-none-manylinux_2_27_x86_64.whl");
    REQUIRE(rt13);
    CHECK(rt13->product == "cuda_runtime");
    CHECK(rt13->cuda_variant.empty());
}

TEST_CASE("names that are not CUDA or cuDNN archives", "[archive_name]") {
    for (const char* bad :
         {"", "cudnn.zip", "cudnn-11.2-linux-x64-v8.1.0.77", "cudnn-11.2-solaris-x64-v8.1.0.77.tgz",
          "cudnn-linux-x86_64-8.9.7.29-archive.tar.xz",
          "numpy-1.26.0-cp311-cp311-manylinux_x86_64.whl", "nvidia_cudnn-9.1.0.70-py3-none-any.whl",
          "cuda_nvcc-linux-x86_64-11.8.89.tar.xz", "cuda_nvcc-linux-mips-11.8.89-archive.tar.xz",
          "cudnn-11.2-linux-x64-v8.1..77.tgz", "../-linux-x86_64-1.2-archive.tar.xz"})
        CHECK_FALSE(parse_archive_name(bad));
}

TEST_CASE("project names normalise as pip does", "[archive_name]") {
    CHECK(normalize_project_name("nvidia_cudnn_cu12") == "nvidia-cudnn-cu12");
    CHECK(normalize_project_name("NVIDIA-cuDNN.cu12") == "nvidia-cudnn-cu12");
    CHECK(normalize_project_name("a__b") == "a-b");
}

TEST_CASE("NCCL names", "[archive_name]") {
    auto a = parse_archive_name("nccl_2.21.5-1+cuda12.4_x86_64.txz");
    REQUIRE(a);
    CHECK(a->family == ArchiveFamily::NcclArchive);
    CHECK(a->product == "nccl");
    CHECK(a->version == "2.21.5");
    CHECK(a->cuda_variant == "12.4");
    CHECK(a->platform == "linux-x86_64");
    CHECK(a->extension == "txz");
    CHECK(parse_archive_name("nccl_2.5.6-2+cuda10.2_x86_64.txz")->version == "2.5.6");
    CHECK(parse_archive_name("nccl_2.28.9-1+cuda13.0_aarch64.txz")->platform == "linux-sbsa");
    CHECK(parse_archive_folder_name("nccl_2.21.5-1+cuda12.4_x86_64")->family ==
          ArchiveFamily::NcclArchive);
    auto w = parse_archive_name("nvidia_nccl_cu12-2.21.5-py3-none-manylinux2014_x86_64.whl");
    REQUIRE(w);
    CHECK(w->family == ArchiveFamily::NcclWheel);
    CHECK(w->cuda_variant == "12");
    CHECK(w->wheel_project == "nvidia-nccl-cu12");
    for (const char* bad : {"nccl_2.21-1+cuda12.4_x86_64.txz", "nccl_2.21.5+cuda12.4_x86_64.txz",
                            "nccl_2.21.5-1+cuda12.4_sparc.txz", "nccl_2.21.5-x+cuda12.4_x86_64.txz",
                            "nvidia_nccl-2.21.5-py3-none-any.whl"}) {
        INFO(bad);
        auto n = parse_archive_name(bad);
        CHECK((!n || n->product != "nccl"));
    }
}
