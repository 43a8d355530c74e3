#pragma once
// The one line `cvm use`, `cvm use --for` and `cvm shell` say when the Python that would run has a
// framework that would load another cuDNN than its own under the selection (doctor/framework_cudnn.h).
#include "core/store.h"

namespace cvm::cli {

// Asks the Python that would run for its search path (isolated; nothing is imported) and prints
// `warning: ...` (a mixed set it accepts) or `error ahead: ...` (a release it refuses) with the
// way out; nothing when the selection has no cuDNN, on Windows, or when all is well.
void warn_framework_cudnn(const Resolved& r);

} // namespace cvm::cli
