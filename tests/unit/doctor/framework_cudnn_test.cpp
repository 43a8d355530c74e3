#include "doctor/framework_cudnn.h"

#include <catch2/catch.hpp>

using namespace cvm;
using namespace cvm::doctor;

namespace {
Version v(std::initializer_list<unsigned> parts) { return Version{std::vector<unsigned>(parts)}; }
} // namespace

TEST_CASE("framework cuDNN: what PyTorch's own wheel loads under a selection", "[doctor][framework]") {
    const Version built = v({9, 26, 0, 51}), own = v({9, 26, 0, 51});
    using K = FrameworkCudnnVerdict::Kind;
    using R = CudnnRefuser;
    // Nothing selected, the same release, another major: its own, whole.
    CHECK(judge_framework_cudnn("PyTorch", built, own, std::nullopt, false, R::PyTorch).kind == K::Own);
    CHECK(judge_framework_cudnn("PyTorch", built, own, v({9, 26, 0, 51}), false, R::PyTorch).kind == K::Own);
    CHECK(judge_framework_cudnn("PyTorch", built, own, v({8, 9, 7}), false, R::PyTorch).kind == K::Own);
    // DT_RPATH $ORIGIN: its sub-libraries come before LD_LIBRARY_PATH, whatever is selected.
    auto rpath = judge_framework_cudnn("PyTorch", built, own, v({9, 19, 0, 56}), true, R::PyTorch);
    CHECK(rpath.kind == K::Own);
    CHECK(rpath.message.find("RPATH ($ORIGIN)") != std::string::npos);
    // DT_RUNPATH: a newer release mixes in and is accepted, an older minor is refused.
    auto mixed = judge_framework_cudnn("PyTorch", built, own, v({9, 28, 1, 4}), false, R::PyTorch);
    CHECK(mixed.kind == K::Mixed);
    CHECK(mixed.message.find("mixed cuDNN") != std::string::npos);
    CHECK(mixed.message.find("it accepts 9.28.1 (built with 9.26.0)") != std::string::npos);
    auto refused = judge_framework_cudnn("PyTorch", built, own, v({9, 19, 0, 56}), false, R::PyTorch);
    CHECK(refused.kind == K::Refused);
    CHECK(refused.message.find("it refuses 9.19.0 (built with 9.26.0: it needs 9.26 or a later 9.x)") !=
          std::string::npos);
    // The minor decides, not the patch: built with 9.26.0, 9.26.1 is accepted (mixed).
    CHECK(judge_framework_cudnn("PyTorch", built, own, v({9, 26, 1, 1}), false, R::PyTorch).kind == K::Mixed);
}

TEST_CASE("framework cuDNN: JAX's plugin, built with its METADATA's lower bound, refused in XLA's words",
          "[doctor][framework]") {
    using K = FrameworkCudnnVerdict::Kind;
    const Version built = v({9, 12, 0, 46}), own = v({9, 26, 0, 51});
    // RUNPATH: a selection of the same major mixes in; at least the build's minor is accepted.
    CHECK(judge_framework_cudnn("JAX 0.10.2", built, own, v({9, 19, 0, 56}), false, CudnnRefuser::Xla).kind ==
          K::Mixed);
    CHECK(judge_framework_cudnn("JAX 0.10.2", built, own, v({9, 12, 0}), false, CudnnRefuser::Xla).kind == K::Mixed);
    auto refused = judge_framework_cudnn("JAX 0.10.2", built, own, v({9, 10, 2, 21}), false, CudnnRefuser::Xla);
    CHECK(refused.kind == K::Refused);
    CHECK(refused.message.find("it refuses 9.10.2 (built with 9.12.0: it needs 9.12 or a later 9.x)") !=
          std::string::npos);
    CHECK(refused.message.find("\"Loaded runtime CuDNN library: 9.10.2 but source was compiled with: 9.12.0\"") !=
          std::string::npos);
    CHECK(refused.message.find("DNN library initialization failed") != std::string::npos);
    // A lower bound of two parts (the CUDA 12 plugin's ">=9.8") is printed as XLA prints it: 9.8.0.
    auto short_floor = judge_framework_cudnn("JAX 0.10.2", v({9, 8}), own, v({9, 5, 1, 17}), false, CudnnRefuser::Xla);
    CHECK(short_floor.message.find("compiled with: 9.8.0\"") != std::string::npos);
    CHECK(refused.message.find("torch") == std::string::npos);
    // RPATH $ORIGIN: its own whole.
    CHECK(judge_framework_cudnn("JAX 0.10.2", built, own, v({9, 10, 2}), true, CudnnRefuser::Xla).kind == K::Own);

    SECTION("from an installed JAX's files") {
        FrameworkInstall f;
        f.name = "jax";
        f.version = "0.10.2";
        f.cudnn = "9.12.0.46";
        f.own_cudnn_dir = "/v/site/nvidia/cudnn/lib";
        f.own_cudnn_version = "9.26.0.51";
        auto jax = judge_own_cudnn(f, "JAX 0.10.2", v({9, 10, 2}), "13.0.2");
        REQUIRE(jax);
        CHECK(jax->kind == K::Refused);
        CHECK(jax->fix.find("cvm use 13.0.2+9.26.0.51") != std::string::npos);
        f.own_cudnn_version.reset(); // an unreadable release is not judged
        CHECK_FALSE(judge_own_cudnn(f, "JAX 0.10.2", v({9, 10, 2}), "13.0.2"));
        f.own_cudnn_version = "9.26.0.51";
        f.name = "tensorflow";
        CHECK_FALSE(judge_own_cudnn(f, "TensorFlow 2.20.0", v({9, 10, 2}), "13.0.2"));
    }
}

TEST_CASE("framework cuDNN: the way out names the wheel's folder and its release", "[doctor][framework]") {
    CHECK(select_own_cudnn_fix("/v/lib/python3.11/site-packages/nvidia/cudnn/lib", Version{{9, 26, 0, 51}}, "13.0.2") ==
          "select its own cuDNN: `cvm import /v/lib/python3.11/site-packages/nvidia/cudnn`, then `cvm use "
          "13.0.2+9.26.0.51` (or `cvm use 13.0.2` to select none)");
    // PyTorch: `cvm use --for .` imports its wheels and selects them in one command.
    CHECK(select_own_cudnn_fix("/v/nvidia/cudnn/lib", Version{{9, 26, 0, 51}}, "13.0.2", true) ==
          "select its own cuDNN and NCCL in one command: `cvm use --for .` (imports its wheels and selects them with "
          "the toolkit it was built for), or only its cuDNN: `cvm import /v/nvidia/cudnn`, then `cvm use "
          "13.0.2+9.26.0.51` (or `cvm use 13.0.2` to select none)");
}
