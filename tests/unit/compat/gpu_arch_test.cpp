// GPU architectures: the registry table against what nvcc prints, nvidia-smi's compute_cap
// lines, and the judgement of a toolkit for a GPU.
#include <catch2/catch.hpp>

#include "compat/gpu_arch.h"
#include "platform/platform.h"
#include "registry/registry.h"
#include "version_support.h"

using namespace cvm;
using namespace cvm::compat;
using cvm::test::v;

namespace {

// "compute_75 compute_80 ..." of `nvcc --list-gpu-arch` as numbers.
std::vector<unsigned> listed(const std::string& text) {
    std::vector<unsigned> out;
    size_t at = 0;
    while ((at = text.find("compute_", at)) != std::string::npos) {
        at += 8;
        out.push_back(static_cast<unsigned>(std::stoul(text.substr(at))));
    }
    return out;
}
} // namespace

TEST_CASE("registry/gpu_archs.toml covers every CUDA release and matches nvcc where installed") {
    auto table = load_gpu_arch_table();
    auto reg = registry::load_default_registry();
    for (const auto& release : reg.cuda) {
        INFO(release.version.str());
        REQUIRE(arch_row(table, release.version));
    }
    // The sources' examples: 13.0 starts at compute_75; 11.8 ends at compute_90; 12.0 dropped Kepler.
    CHECK(arch_row(table, v("13.0.2"))->compute.front() == 75u);
    CHECK(arch_row(table, v("11.8.0"))->compute.back() == 90u);
    CHECK(arch_row(table, v("12.0.0"))->compute.front() == 50u);
    for (auto [nvcc, cuda] : {std::pair{"/usr/local/cuda-13.0/bin/nvcc", "13.0"},
                              std::pair{"/usr/lib/nvidia-cuda-toolkit/bin/nvcc", "11.8"}}) {
        if (!platform::exists(nvcc)) continue;
        auto out = platform::capture_output(nvcc, {nvcc, "--list-gpu-arch"}, 20000);
        REQUIRE(out);
        auto numbers = listed(*out);
        std::sort(numbers.begin(), numbers.end());
        CHECK(numbers == arch_row(table, v(cuda))->compute);
    }
    CHECK_THROWS_AS(parse_gpu_arch_table("[[toolkit]]\ncuda = \"11.8\"\ncompute = [90, 80]\nsource = \"x\"\n", "t.toml"),
                    registry::RegistryError);
    CHECK_THROWS_AS(parse_gpu_arch_table("[[toolkit]]\ncuda = \"11.8\"\ncompute = [80]\nsource = \"x\"\nsm = 1\n", "t.toml"),
                    registry::RegistryError);
}

TEST_CASE("nvidia-smi's compute_cap lines") {
    auto gpus = gpus_from_smi_compute_cap("NVIDIA H200, 9.0\nTesla V100-SXM2-16GB, 7.0\r\nNVIDIA Test GPU, 525.60.13\n\n");
    REQUIRE(gpus.size() == 2);
    CHECK(gpus[0].name == "NVIDIA H200");
    CHECK(gpus[0].cc == 90u);
    CHECK(gpus[1].cc == 70u);
    CHECK(gpus_from_smi_compute_cap("Field \"compute_cap\" is not a valid field to query.\n").empty());
}

TEST_CASE("a toolkit for a GPU: native, JIT of an older PTX, or not at all") {
    auto table = load_gpu_arch_table();
    Gpu h200{"NVIDIA H200", 90}, v100{"Tesla V100", 70};
    CHECK(judge_arch(*arch_row(table, v("12.4")), h200, table).support == ArchSupport::Native);
    auto jit = judge_arch(*arch_row(table, v("11.2")), h200, table);
    CHECK(jit.support == ArchSupport::PtxJit);
    CHECK(jit.message.find("CUDA 11.2 cannot build for sm_90 (NVIDIA H200, compute capability 9.0); its newest PTX, "
                           "compute_86, will be JIT-compiled") == 0);
    CHECK(jit.message.find("CUDA 11.8 to 13.2 build for it") != std::string::npos);
    auto none = judge_arch(*arch_row(table, v("13.0")), v100, table);
    CHECK(none.support == ArchSupport::None);
    CHECK(none.message.find("it starts at compute_75") != std::string::npos);
    CHECK(none.message.find("CUDA 10.0 to 12.9 build for it") != std::string::npos);
}
