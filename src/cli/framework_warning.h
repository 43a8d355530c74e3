#pragma once
// The lines `cvm use`, `cvm use --for`, `cvm shell` and `cvm script` say when the Python that would
// run has a framework that would load another cuDNN or cuBLAS than its own under the selection
// (doctor/framework_cudnn.h, doctor/framework_cublas.h).
#include "store/resolve.h"
#include "store/store.h"

namespace cvm::cli {

// Asks the Python that would run for its search path (isolated; nothing is imported) and prints
// `warning: ...` (a mixed cuDNN it accepts; another or a mixed cuBLAS) or `error ahead: ...` (a
// cuDNN release it refuses) with the way out; nothing on Windows, or when all is well.
void warn_framework_libraries(const Store& store, const Resolved& r);

} // namespace cvm::cli
