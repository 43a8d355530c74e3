#pragma once
// Names for the numbers the CUDA runtime and cuDNN return, for when the library cannot name them.

#include <string>

namespace cvm::probe {

// CUDNN_STATUS_* for both numbering schemes: cuDNN 7/8 (0..14) and cuDNN 9 (categories of 1000).
std::string cudnn_status_fallback_name(int status);
// cudaError names for the codes the probe reasons about.
std::string cuda_error_fallback_name(int error);
// CUDNN_CONVOLUTION_FWD_ALGO_* without the prefix, e.g. IMPLICIT_PRECOMP_GEMM.
std::string forward_algorithm_name(int algorithm);
// CUDNN_*_MATH without prefix and suffix: DEFAULT, TENSOR_OP, TENSOR_OP_ALLOW_CONVERSION, FMA.
std::string math_type_name(int math);

} // namespace cvm::probe
