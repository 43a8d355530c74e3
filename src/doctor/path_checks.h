#pragma once
// Findings about PATH and the variables that name a toolkit: several CUDA toolkits' folders on
// PATH, and CUDA_PATH or CUDA_HOME naming another toolkit than the selection's.

#include "diagnosis.h"

namespace cvm::doctor {

void check_path(const DoctorInputs& in, DoctorReport& report);
void check_cuda_path(const DoctorInputs& in, DoctorReport& report);

} // namespace cvm::doctor
