#pragma once
// `cvm doctor`'s judgement: from a snapshot of the machine (environment, selection, driver,
// Python, file system) to the libraries that load and the problems, each with a fix. Everything
// it looks at arrives in DoctorInputs (diagnosis.h), so tests build broken machines in temporary
// folders.

#include "diagnosis.h"
#include "linux_loader.h"

namespace cvm::doctor {

DoctorReport diagnose(const DoctorInputs& inputs);

} // namespace cvm::doctor
