#pragma once
// Names for the numbers the CUDA runtime and cuDNN return, for when the library cannot name them.

#include <string>

namespace cvm::probe {

// CUDNN_STATUS_* for both numbering schemes: cuDNN 7/8 (0..14) and cuDNN 9 (categories of 1000).
std::string cudnn_status_fallback_name(int status);
// True for the statuses that say a sub-library failed to load or is of another release:
// CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH (1002) and _LOADING_FAILED (1008) of cuDNN 9,
// CUDNN_STATUS_VERSION_MISMATCH (14) of cuDNN 8 (cuDNN 7 has no sub-libraries).
bool is_sublibrary_status(int status, int cudnn_major);
// cudaError names for the codes the probe reasons about.
std::string cuda_error_fallback_name(int error);
// CUDNN_CONVOLUTION_FWD_ALGO_* without the prefix, e.g. IMPLICIT_PRECOMP_GEMM.
std::string forward_algorithm_name(int algorithm);
// CUDNN_*_MATH without prefix and suffix: DEFAULT, TENSOR_OP, TENSOR_OP_ALLOW_CONVERSION, FMA.
std::string math_type_name(int math);

} // namespace cvm::probe
