#pragma once
// Which files of a shared folder are a CUDA toolkit's, by name (shared folders hold other
// packages' files too), and the release a Debian package's version names.
#include <optional>
#include <string>
#include <string_view>

#include "platform/platform.h"
#include "spec/spec.h"

namespace cvm {

// nvcc, ptxas, cuobjdump, ... (and nvcc.profile, crt/ that nvcc reads beside itself); never
// gcc/g++ wrappers or the folder's other programs.
bool is_cuda_program(const std::string& name, platform::Os os);
// libcudart.so.12, libcublasLt_static.a, libnppc.so.11, cudart64_12.dll, cublas.lib; never
// libcuda (the driver), libcudnn (cuDNN), libcurl, libcups...
bool is_cuda_library(const std::string& name, platform::Os os);
// cuda.h, cuda_runtime.h, crt/, cub/, thrust/, cublas*.h, ... out of a shared include folder.
bool is_cuda_header(const std::string& name);
// dpkg's "11.8.89~11.8.0-5~deb12u1" -> 11.8.0, "11.5.1-1ubuntu1" -> 11.5.1.
std::optional<Version> release_from_debian_version(std::string_view version);

} // namespace cvm
