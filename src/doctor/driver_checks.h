#pragma once
// Findings about the NVIDIA driver and the GPUs: none found, a driver library without a kernel
// module, no GPU listed, and a driver too old for the selected toolkit (or running it through
// minor-version compatibility).

#include "diagnosis.h"

namespace cvm::doctor {

void check_driver(const DoctorInputs& in, DoctorReport& report);

} // namespace cvm::doctor
