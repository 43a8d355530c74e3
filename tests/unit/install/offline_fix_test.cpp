#include "install/offline_fix.h"

#include <catch2/catch.hpp>

using namespace cvm::install;

TEST_CASE("offline fix: what to fetch by other means, each file once", "[install][offline]") {
    const std::string base = "https://developer.download.nvidia.com/compute";
    // One archive: the file and the command that installs it.
    CHECK(offline_fix(base + "/redist/nccl/v2.21.5/nccl_2.21.5-1+cuda12.4_x86_64.txz") ==
          "; or download " + base + "/redist/nccl/v2.21.5/nccl_2.21.5-1+cuda12.4_x86_64.txz elsewhere and run "
          "`cvm install ./nccl_2.21.5-1+cuda12.4_x86_64.txz`");
    CHECK(offline_fix(base + "/cuda/12.2.2/local_installers/cuda_12.2.2_535.104.05_linux.run").find(
              "`cvm install ./cuda_12.2.2_535.104.05_linux.run`") != std::string::npos);
    // A cuDNN manifest: it and the archive it lists.
    CHECK(offline_fix(base + "/cudnn/redist/redistrib_9.1.0.json").find("then the cuDNN archive it lists") !=
          std::string::npos);
    // Anything else (a checksum list): the server's layout, never `cvm install` of it.
    auto sums = offline_fix(base + "/cuda/12.2.2/docs/sidebar/md5sum.txt");
    CHECK(sums.find("CVM_MIRROR=file://DIR") != std::string::npos);
    CHECK(sums.find("cvm install") == std::string::npos);
    // A toolkit: the manifest and each archive once, where they lie under the mirror.
    const std::string manifest = base + "/cuda/redist/redistrib_12.4.1.json";
    const std::string nvcc = base + "/cuda/redist/cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz";
    const std::string rt = base + "/cuda/redist/cuda_cudart/linux-x86_64/cuda_cudart-linux-x86_64-12.4.127-archive.tar.xz";
    auto all = offline_fix_toolkit(base, manifest, {nvcc, rt, nvcc}, "12.4.1", "linux-x86_64");
    CHECK(all == "; or download 3 files (" + manifest + ", " + nvcc + ", " + rt + ") elsewhere into a folder DIR, each "
                 "where it lies under " + base + ", and run `CVM_MIRROR=file://DIR cvm install cuda 12.4.1`");
    CHECK(offline_fix_toolkit(base, manifest, {}, "12.4.1", "linux-x86_64")
              .find(manifest + " and the archives it lists for linux-x86_64") != std::string::npos);
}
