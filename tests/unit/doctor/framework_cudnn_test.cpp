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
    // Nothing selected, the same release, another major: its own, whole.
    CHECK(judge_framework_cudnn("PyTorch", built, own, std::nullopt, false).kind == K::Own);
    CHECK(judge_framework_cudnn("PyTorch", built, own, v({9, 26, 0, 51}), false).kind == K::Own);
    CHECK(judge_framework_cudnn("PyTorch", built, own, v({8, 9, 7}), false).kind == K::Own);
    // DT_RPATH $ORIGIN: its sub-libraries come before LD_LIBRARY_PATH, whatever is selected.
    auto rpath = judge_framework_cudnn("PyTorch", built, own, v({9, 19, 0, 56}), true);
    CHECK(rpath.kind == K::Own);
    CHECK(rpath.message.find("RPATH ($ORIGIN)") != std::string::npos);
    // DT_RUNPATH: a newer release mixes in and is accepted, an older minor is refused.
    auto mixed = judge_framework_cudnn("PyTorch", built, own, v({9, 28, 1, 4}), false);
    CHECK(mixed.kind == K::Mixed);
    CHECK(mixed.message.find("mixed cuDNN") != std::string::npos);
    CHECK(mixed.message.find("it accepts 9.28.1 (built with 9.26.0)") != std::string::npos);
    auto refused = judge_framework_cudnn("PyTorch", built, own, v({9, 19, 0, 56}), false);
    CHECK(refused.kind == K::Refused);
    CHECK(refused.message.find("it refuses 9.19.0 (built with 9.26.0: it needs 9.26 or a later 9.x)") !=
          std::string::npos);
    // The minor decides, not the patch: built with 9.26.0, 9.26.1 is accepted (mixed).
    CHECK(judge_framework_cudnn("PyTorch", built, own, v({9, 26, 1, 1}), false).kind == K::Mixed);
}

TEST_CASE("framework cuDNN: the way out names the wheel's folder and its release", "[doctor][framework]") {
    CHECK(select_own_cudnn_fix("/v/lib/python3.11/site-packages/nvidia/cudnn/lib", Version{{9, 26, 0, 51}}, "13.0.2") ==
          "select its own cuDNN: `cvm import /v/lib/python3.11/site-packages/nvidia/cudnn`, then `cvm use "
          "13.0.2+9.26.0.51` (or `cvm use 13.0.2` to select none)");
}
