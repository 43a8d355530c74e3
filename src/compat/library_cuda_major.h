#pragma once
// `cvm doctor`: the cuDNN a program started here or through cvm would load, read for the CUDA
// major it was built for (layouts/cudnn_cuda_major.h: the CUDA libraries its files name), against
// the selected toolkit's. A cuDNN 9 built for CUDA 13 that an 11.8 project loads through
// ld.so.cache fails at its first call, whether or not the selection names a cuDNN.
#include "doctor/diagnose.h"

namespace cvm::compat {

// Code library-cuda-mismatch (error): one finding per cuDNN file set of another CUDA major
// among the report's loads, naming the file, the evidence and the toolkit.
std::vector<doctor::Finding> library_cuda_major_findings(const doctor::DoctorReport& report);

} // namespace cvm::compat
