// The GPUs of cuDNN builds (registry/cudnn_archs.toml against the support matrices' examples) and
// of PyTorch builds (torch.cuda.get_arch_list() outputs of real wheels).
#include <catch2/catch.hpp>

#include "compat/cudnn_arch.h"
#include "compat/torch_arch.h"
#include "registry/registry.h"
#include "version_support.h"

using namespace cvm;
using namespace cvm::compat;
using cvm::test::v;

namespace {
const Gpu kH200{"NVIDIA H200", 90};
const Gpu kV100{"Tesla V100-SXM2-16GB", 70};
const Gpu kRtx5090{"NVIDIA GeForce RTX 5090", 120};
const Gpu kK80{"Tesla K80", 37};
const Gpu kGtx980{"NVIDIA GeForce GTX 980", 52};
const Gpu kA10{"NVIDIA A10", 86};
} // namespace

TEST_CASE("registry/cudnn_archs.toml covers every cuDNN build once") {
    auto table = load_cudnn_arch_table();
    auto reg = registry::load_default_registry();
    for (const auto& release : reg.cudnn)
        for (const auto& build : release.builds) {
            INFO(release.version.str() + "-cuda" + build.cuda.str());
            CHECK(cudnn_arch_row(table, release.version, build.cuda));
        }
}

TEST_CASE("cuDNN builds against the support matrices' examples") {
    auto table = load_cudnn_arch_table();
    auto serves = [&](const char* cudnn, const char* cuda, unsigned cc) {
        const CudnnArchRow* row = cudnn_arch_row(table, v(cudnn), v(cuda));
        REQUIRE(row);
        return cudnn_row_serves(*row, cc);
    };
    // 8.1.0 - 8.1.1 for CUDA 11.x: SM 3.5 and later, Ampere the newest (no Hopper).
    CHECK(serves("8.1.0.77", "11.2", 35));
    CHECK(serves("8.1.0.77", "11.2", 86));
    CHECK_FALSE(serves("8.1.0.77", "11.2", 90));
    CHECK_FALSE(serves("8.1.0.77", "11.2", 30));
    // ... and for CUDA 10.2: SM 3.0 and later, Turing the newest.
    CHECK(serves("8.1.0.77", "10.2", 30));
    CHECK_FALSE(serves("8.1.0.77", "10.2", 80));
    // 8.9.x: 5.0 to 9.0; Maxwell's 5.2 through the 5.0 entry, Orin's 8.7 through 8.6.
    CHECK(serves("8.9.7.29", "12", 90));
    CHECK(serves("8.9.7.29", "12", 52));
    CHECK(serves("8.9.7.29", "11", 87));
    CHECK_FALSE(serves("8.9.7.29", "11", 37));
    // 9.10.2 for CUDA 12: Blackwell (12.0, 10.0) added; 9.17 for CUDA 13 starts at Turing.
    CHECK(serves("9.10.2.21", "12", 120));
    CHECK_FALSE(serves("9.5.1.17", "12", 120));
    CHECK(serves("9.17.0.29", "13", 75));
    CHECK_FALSE(serves("9.17.0.29", "13", 70));
    CHECK(serves("9.17.0.29", "13", 103)); // B300 through 10.0
    CHECK_FALSE(cudnn_arch_row(table, v("6.0.21"), v("8.0")));

    CHECK_THROWS_AS(parse_cudnn_arch_table("[[build]]\ncudnn = [\"8.1\", \"8.0\"]\ncuda = [\"11\"]\ncompute = [35]\nsource = \"x\"\n", "t.toml"),
                    registry::RegistryError);
    CHECK_THROWS_AS(parse_cudnn_arch_table("[[build]]\ncudnn = [\"8.0\", \"8.5\"]\ncuda = [\"11\"]\ncompute = [35]\nsource = \"x\"\n"
                                           "[[build]]\ncudnn = [\"8.5\", \"8.9\"]\ncuda = [\"11\", \"12\"]\ncompute = [50]\nsource = \"y\"\n",
                                           "t.toml"),
                    registry::RegistryError);
    CHECK_THROWS_AS(parse_cudnn_arch_table("[[build]]\ncudnn = [\"8.0\", \"8.5\"]\ncuda = [\"11\"]\ncompute = [35]\nsource = \"x\"\nsm = 1\n", "t.toml"),
                    registry::RegistryError);
}

TEST_CASE("a cuDNN build judged for a GPU") {
    auto table = load_cudnn_arch_table();
    const CudnnArchRow* row = cudnn_arch_row(table, v("8.1.0.77"), v("11.2"));
    REQUIRE(row);
    auto j = judge_cudnn_arch(*row, v("8.1.0.77"), kH200, table);
    CHECK(j.support == CudnnArchSupport::None);
    CHECK(j.message == "cuDNN 8.1.0 does not support sm_90 (NVIDIA H200, compute capability 9.0): its build supports "
                       "compute capability 3.5 to 8.6; cuDNN 8.6 to 9.24 support it");
    CHECK(judge_cudnn_arch(*row, v("8.1.0.77"), kV100, table).support == CudnnArchSupport::Supported);
    // cuDNN 9 on a newer GPU: the forward-compatible subset only.
    row = cudnn_arch_row(table, v("9.5.1.17"), v("12"));
    j = judge_cudnn_arch(*row, v("9.5.1.17"), kRtx5090, table);
    CHECK(j.support == CudnnArchSupport::ForwardOnly);
    CHECK(j.message.find("cuDNN 9.5.1 has no kernels built for sm_120 (NVIDIA GeForce RTX 5090, compute capability 12.0)") == 0);
    CHECK(j.message.find("cuDNN 9.7 to 9.24 support it") != std::string::npos);
    // ... but an older GPU than its list is not supported at all.
    row = cudnn_arch_row(table, v("9.19.0.56"), v("13"));
    j = judge_cudnn_arch(*row, v("9.19.0.56"), kV100, table);
    CHECK(j.support == CudnnArchSupport::None);
    CHECK(judge_cudnn_arch(*row, v("9.19.0.56"), kGtx980, table).support == CudnnArchSupport::None);
    CHECK(judge_cudnn_arch(*row, v("9.19.0.56"), kA10, table).support == CudnnArchSupport::Supported);
}

TEST_CASE("torch.cuda.get_arch_list() outputs") {
    // torch 2.1.2+cu121's list; a warning line before the JSON is skipped.
    auto list = parse_torch_arch_output(
        "some import message\n[\"sm_50\", \"sm_60\", \"sm_70\", \"sm_75\", \"sm_80\", \"sm_86\", \"sm_90\"]\n");
    REQUIRE(list);
    CHECK(list->size() == 7);
    CHECK(parse_torch_arch_output("[]\n")->empty());
    CHECK_FALSE(parse_torch_arch_output("Traceback (most recent call last):\n"));
    CHECK_FALSE(parse_torch_arch_output(""));

    const std::string torch = "PyTorch 2.1.2+cu121";
    CHECK(judge_torch_arch(*list, kH200, torch).support == TorchArchSupport::Native);
    CHECK(judge_torch_arch(*list, kGtx980, torch).support == TorchArchSupport::Native); // sm_50 cubin on 5.2
    auto j = judge_torch_arch(*list, kRtx5090, torch);
    CHECK(j.support == TorchArchSupport::None);
    CHECK(j.message == "PyTorch 2.1.2+cu121 cannot run on sm_120 (NVIDIA GeForce RTX 5090, compute capability 12.0): it has "
                       "kernels for sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90 and no PTX it could JIT-compile "
                       "(torch.cuda.get_arch_list())");
    CHECK(judge_torch_arch(*list, kK80, torch).support == TorchArchSupport::None);
    // A list with PTX (torch 1.x builds carried compute_37): newer GPUs JIT-compile it.
    std::vector<std::string> with_ptx{"sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "compute_86"};
    j = judge_torch_arch(with_ptx, kH200, "PyTorch 1.12.1+cu116");
    CHECK(j.support == TorchArchSupport::PtxJit);
    CHECK(j.message.find("its PTX, compute_86, will be JIT-compiled") != std::string::npos);
    // sm_90a runs on 9.0 only.
    CHECK(judge_torch_arch({"sm_80", "sm_90a"}, kH200, torch).support == TorchArchSupport::Native);
    CHECK(judge_torch_arch({"sm_80", "sm_90a"}, Gpu{"future", 92}, torch).support == TorchArchSupport::None);
}
