#include <catch2/catch.hpp>

#include "image/runtime_filter.h"

using cvm::image::build_only;

TEST_CASE("--runtime leaves out what only building needs") {
    for (const char* rel : {"bin",
                            "bin/nvcc",
                            "bin/crt/link.stub",
                            "nvvm",
                            "nvvm/libdevice/libdevice.10.bc",
                            "include",
                            "include/cuda.h",
                            "targets/x86_64-linux/include",
                            "targets/x86_64-linux/include/cudnn.h",
                            "lib/libcudart_static.a",
                            "lib64/libculibos.a",
                            "lib64/stubs",
                            "lib64/stubs/libcuda.so",
                            "samples",
                            "samples/x/y.cu",
                            "extras/demo_suite",
                            "extras/demo_suite/bandwidthTest",
                            "extras/CUPTI/samples",
                            "lib/cmake/thing.hpp",
                            "share/x.cuh"})
        CHECK(build_only(rel));
}

TEST_CASE("--runtime keeps shared libraries, licences and version files") {
    for (const char* rel :
         {"lib", "lib64", "lib/libcudart.so.13", "lib/libcudart.so", "lib/libnvvm.so.4",
          "lib64/libcudnn_ops.so.9", "targets/x86_64-linux/lib", "version.json", "LICENSE",
          "licenses/cuda_nvcc/LICENSE", "extras/CUPTI/lib64/libcupti.so.13", "dist-info/RECORD",
          "lib/binaries.txt", "lib/header-data", "bins/x", "lib/nvvm", "data"})
        CHECK_FALSE(build_only(rel));
}
