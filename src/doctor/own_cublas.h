#pragma once
// A framework's own cuBLAS, read from its files (nothing is imported): the nvidia-cublas wheel
// beside it and whether the framework reaches that wheel's libcublas and libcublasLt ahead of
// LD_LIBRARY_PATH. framework_cublas.h judges what that means under a selection, and says how
// PyTorch and JAX load them.
#include "file_system_view.h"

#include <optional>
#include <string>
#include <vector>

namespace cvm::doctor {

struct OwnCublas {
    std::string dir;                    // the wheel's folder holding libcublas.so.<major>: CUDA 13's
                                        // SITE/nvidia/cu13/lib, else SITE/nvidia/cublas/lib
    std::optional<std::string> version; // the wheel's release, "13.4.1.3"
    std::string major;                  // "13"
    bool cublas_first = false;          // libcublas is reached there ahead of LD_LIBRARY_PATH
    bool lt_first = false;              // libcublasLt too
    bool lt_later = false;              // libcublasLt is loaded by full path too, after libcublas (JAX's plugin)
    std::string how;                    // "its libtorch_cuda.so names both and finds them through its RPATH"
};

// The nvidia-cublas wheel in `site`, and how the framework reaches it, from its `loaders`: the
// Python files that load the wheel's libraries by full path (PyTorch's torch/__init__.py, JAX's
// jax_plugins/xla_cudaN/__init__.py) and the libraries that need cuBLAS by name
// (torch/lib/libtorch_cuda.so); none for a framework whose way is not known (TensorFlow).
// nullopt without such a wheel.
std::optional<OwnCublas> read_own_cublas(const FileSystemView& fs, const std::string& site,
                                         const std::vector<std::string>& loaders);

} // namespace cvm::doctor
