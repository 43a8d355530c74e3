#pragma once
// Findings about the frameworks installed in the Python that would run (python_env.h): damaged
// or CPU-only installs, a CUDA or cuDNN other than the selection's, and what a framework with
// its own cuDNN or cuBLAS wheels loads under cvm (framework_cudnn.h, framework_cublas.h).

#include "diagnosis.h"

namespace cvm::doctor {

void check_frameworks(const DoctorInputs& in, DoctorReport& report);

} // namespace cvm::doctor
