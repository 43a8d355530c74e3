#pragma once
// Findings about the selection and what the store holds for it: nothing or 'system' selected, a
// selection naming nothing installed, headers and libraries of one entry that disagree, and a
// cuDNN paired with a toolkit it does not support.

#include "diagnosis.h"

namespace cvm::doctor {

void check_selection(const DoctorInputs& in, DoctorReport& report);
// Linux only: the version in cudnn_version.h, cuda.h and the libraries' file names agree.
void check_selection_files(const DoctorInputs& in, DoctorReport& report);
void check_cudnn_for_toolkit(const DoctorInputs& in, DoctorReport& report);

} // namespace cvm::doctor
